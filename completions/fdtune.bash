# fdtune.bash - bash completion of fdtune (installed as
# share/bash-completion/completions/fdtune). The commands come from `fdtune help` and each
# command's options from `fdtune COMMAND --help`, so the completion knows what the
# installed program knows and nothing has to be listed twice.
_fdtune() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd="" i
    local prog=${COMP_WORDS[0]}
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --socket | --timeout) ((i++)) ;;
        -*) ;;
        *)
            cmd=${COMP_WORDS[i]}
            break
            ;;
        esac
    done
    case $prev in
    --socket | --spec | --output | -o)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    esac
    if [[ -z $cmd ]]; then
        local commands
        commands=$("$prog" help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
        mapfile -t COMPREPLY < <(compgen -W "$commands --socket --json --timeout --version --help" -- "$cur")
    elif [[ $cur == -* ]]; then
        local options
        options=$("$prog" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    elif [[ $cmd == batch || $cmd == replay || $cmd == import ]]; then
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}
complete -F _fdtune fdtune
