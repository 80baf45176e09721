#!/bin/sh
# Installs everything fdtuned needs to build and test on a fresh Debian 12 machine.
# CUDA is not installed here: the cuda backend loads libcuda.so.1 and libnvrtc.so at run
# time where the driver and toolkit already are (/usr/local/cuda on NVIDIA nodes).
# libxxhash-dev is a header only to the build: common/hashes.c compiles xxHash in
# (XXH_INLINE_ALL), so nothing links libxxhash.
# clang builds `make fuzz`: libFuzzer and the sanitizers' runtimes are in libclang-rt-14-dev,
# which clang only recommends, and clang's -fopenmp links LLVM's libomp (libomp-dev).
# The tests need python3 (hostile peers), sqlite3 (reading the store beside a daemon), strace
# (no chmod or chown by path), util-linux's setpriv and unshare with uidmap's newuidmap
# (rights checked with other uids, as root or in a user namespace), and systemd's
# systemd-analyze and systemd-sysusers (the unit and its account checked as systemd reads
# them; libsystemd-dev for the notifications), and chromium (fdtune report's page rendered
# headless, its plots measured): a test fails without them. tests/test_slurm.sh runs a
# one-node Slurm cluster of its own (slurmctld, slurmd, slurm-client: Debian's packages
# alone, not slurm-wlm's 108 with their recommends); their install scripts would start the
# system's services (munged, slurmctld, slurmd), which a policy-rc.d that answers 101 stops
# for the time of the install (one already there is left as it is).
set -eu
packages="build-essential pkg-config libuv1-dev libsqlite3-dev libjansson-dev libinih-dev
libcmocka-dev libelf-dev libmsgpack-dev libcsv-dev libxxhash-dev zlib1g-dev libsystemd-dev
libsmartcols-dev libamdhip64-dev gfortran
clang libclang-rt-14-dev libomp-dev python3 sqlite3 strace util-linux uidmap procps systemd man-db groff-base
chromium slurmctld slurmd slurm-client"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# Skip apt entirely when everything is present, so repeated runs are quick and work offline.
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    policy=/usr/sbin/policy-rc.d
    if [ ! -e $policy ]; then
        # shellcheck disable=SC2016 # the trap's text is expanded when it runs
        trap '$sudo rm -f $policy' EXIT
        printf '#!/bin/sh\n# install-deps.sh: no service starts while it installs\nexit 101\n' |
            $sudo tee $policy >/dev/null
        $sudo chmod 755 $policy
    fi
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    $sudo apt-get install -y -qq --no-install-recommends $missing
fi
