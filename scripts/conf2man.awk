# conf2man.awk - fdtuned.conf(5) from config/fdtuned.conf, the one place every key is
# documented: the file's head becomes DESCRIPTION, each [section] a section of KEYS, each
# key the paragraph of comments above it, with its default. Run by the Makefile:
#   awk -v version=V -f scripts/conf2man.awk config/fdtuned.conf > fdtuned.conf.5
function esc(s) {
    gsub(/\\/, "\\e", s)
    sub(/^[.']/, "\\\\\\&&", s)
    return s
}
function flush_text(   i) {
    for (i = 1; i <= n; i++)
        print esc(text[i])
    n = 0
}
BEGIN {
    print ".TH FDTUNED.CONF 5 \"\" \"fdtuned " version "\" \"File Formats\""
    print ".SH NAME"
    print "fdtuned.conf \\- settings of the fdtuned daemon"
    print ".SH SYNOPSIS"
    print "/etc/fdtuned/fdtuned.conf, or the file given to \\fBfdtuned \\-\\-config\\fR"
    print ".SH DESCRIPTION"
    head = 1
    n = 0
}
/^# fdtuned.conf - / && NR == 1 { next }
/^#/ {
    line = $0
    sub(/^# ?/, "", line)
    if (head && line == "") { flush_text(); print ".PP"; next }
    text[++n] = line
    next
}
/^\[/ {
    flush_text()
    if (head) { print ".SH KEYS"; head = 0 }
    section = $0
    gsub(/[\[\]]/, "", section)
    print ".SS [" section "]"
    next
}
/^[a-z_]+ =/ {
    key = $1
    value = $0
    sub(/^[a-z_]+ = ?/, "", value)
    print ".TP"
    print "\\fB" key "\\fR = " (value == "" ? "(empty)" : esc(value))
    flush_text()
    next
}
/^$/ { if (head) flush_text(); next }
END {
    flush_text()
    print ".SH SEE ALSO"
    print "\\fBfdtuned\\fR(8), \\fBfdtune\\fR(1), \\fBlibfdtune\\fR(3)"
}
