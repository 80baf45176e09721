/* cpu.c - the cpu backend: runs the HIP-style kernel sources on the host.
 *
 * Owns the C++ unit that gives HIP kernel syntax a host meaning (prelude + source + an
 * OpenMP launcher; for kernels with barriers, each block a team of fibers with a real
 * __syncthreads), building it into a shared object with the system C++ compiler
 * (spawned with posix_spawnp), loading that object, and the host-memory "device" the kernels
 * run on. It lets CI and GPU-less machines run the whole tuning pipeline end to end. */
#include "backends/backend.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The unit compile() builds: the prelude, then (for kernels with barriers) the teams'
 * machinery, the kernel source, one of the two launchers and its entry point. Blocks run in
 * parallel on OpenMP threads, the indices per OS thread. #line keeps compiler messages
 * pointing into the kernel source instead of this unit. __shared__ is one copy per OS
 * thread: a block's threads all run on the thread that owns the block, and the blocks of
 * one OS thread run one after another, so that copy is the block's. */
static const char unit_prelude[] =
    "#line 1 \"fdt-cpu-prelude\"\n"
    "#include <algorithm>\n"
    "#include <cmath>\n"
    "#include <cstddef>\n"
    "#include <cstdint>\n"
    "#include <tuple>\n"
    "#include <utility>\n"
    "#define __global__\n"
    "#define __device__\n"
    "#define __host__\n"
    "#define __forceinline__ inline\n"
    "#define __launch_bounds__(...)\n"
    "#define __shared__ static thread_local\n"
    "using std::max; /* HIP and CUDA declare these outside any namespace */\n"
    "using std::min;\n"
    "struct fdt_cpu_dim3 { unsigned x, y, z; };\n"
    "static thread_local fdt_cpu_dim3 threadIdx, blockIdx, blockDim, gridDim;\n"
    "namespace fdt_cpu {\n"
    "/* args[i] points at argument i, as for cuLaunchKernel. */\n"
    "template <typename... P, std::size_t... I>\n"
    "static std::tuple<P...> unpack(void (*)(P...), void **args, std::index_sequence<I...>)\n"
    "{\n"
    "    return std::tuple<P...>(*static_cast<P *>(args[I])...);\n"
    "}\n"
    "}\n";

/* A kernel without barriers: a block's threads run one after another, each to its end.
 * Kernel is a template argument so that its call can be inlined into the loops; the
 * pointer argument only deduces its parameter types. */
static const char sequential_launcher[] =
    "#line 1 \"fdt-cpu-launcher\"\n"
    "namespace fdt_cpu {\n"
    "template <auto Kernel, typename... P>\n"
    "static void run(void (*k)(P...), fdt_cpu_dim3 grid, fdt_cpu_dim3 block, void **args)\n"
    "{\n"
    "    const std::tuple<P...> a = unpack(k, args, std::index_sequence_for<P...>{});\n"
    "#pragma omp parallel\n"
    "    {\n"
    "        gridDim = grid;\n"
    "        blockDim = block;\n"
    "#pragma omp for collapse(3) schedule(static)\n"
    "        for (unsigned bz = 0; bz < grid.z; bz++)\n"
    "            for (unsigned by = 0; by < grid.y; by++)\n"
    "                for (unsigned bx = 0; bx < grid.x; bx++) {\n"
    "                    blockIdx = {bx, by, bz};\n"
    "                    for (unsigned tz = 0; tz < block.z; tz++)\n"
    "                        for (unsigned ty = 0; ty < block.y; ty++)\n"
    "                            for (unsigned tx = 0; tx < block.x; tx++) {\n"
    "                                threadIdx = {tx, ty, tz};\n"
    "                                std::apply(Kernel, a);\n"
    "                            }\n"
    "                }\n"
    "    }\n"
    "}\n"
    "}\n"
    "\n"
    "extern \"C\" void fdt_cpu_launch(unsigned gx, unsigned gy, unsigned gz,\n"
    "                               unsigned bx, unsigned by, unsigned bz, void **args)\n"
    "{\n"
    "    fdt_cpu::run<FDT_CPU_ENTRY>(FDT_CPU_ENTRY, {gx, gy, gz}, {bx, by, bz}, args);\n"
    "}\n";

/* A kernel with barriers (its source calls __syncthreads): each block runs as a team, one
 * fiber (a stack of its own) per GPU thread, on the OpenMP thread that owns the block. A
 * fiber runs until its next barrier or its end, then hands back to the team's scheduler,
 * which resumes the team's fibers in turn, setting threadIdx for each: every thread of the
 * block reaches a barrier before any passes it, as on a GPU. The switch is a few
 * instructions of our own, because swapcontext's sigprocmask system call made a barrier
 * cost 670 ns a thread (measured here), hundreds of times the stencil's own work; so this
 * runs on x86-64 alone, where host_info reports block barriers. The stacks are one mapping
 * with a guard page below them all, fiber 0's the lowest: a kernel's frame is the same in
 * every thread (kernels neither recurse nor alloca), so the first to overflow is fiber 0,
 * which runs first, and it faults on that page (SIGSEGV, as a GPU's overflow is an illegal
 * address) rather than write over another fiber's stack. */
static const char team_machinery[] =
    "#line 1 \"fdt-cpu-teams\"\n"
    "#if !defined(__x86_64__)\n"
    "#error \"__syncthreads runs on the cpu backend of x86-64 hosts only\"\n"
    "#endif\n"
    "#include <cerrno>\n"
    "#include <cstdlib>\n"
    "#include <sys/mman.h>\n"
    "#include <unistd.h>\n"
    "namespace fdt_cpu {\n"
    "struct fiber { void *sp; bool done; };\n"
    "struct team {\n"
    "    void *scheduler_sp; /* the OpenMP thread's own stack, while a fiber runs */\n"
    "    fiber *fibers;\n"
    "    unsigned count, running;\n"
    "    const void *args;   /* the kernel's arguments, a std::tuple */\n"
    "    char *map, *stacks; /* the mapping: a guard page, then count stacks */\n"
    "    std::size_t map_bytes;\n"
    "};\n"
    "static thread_local team *current_team;\n"
    "\n"
    "/* Pushes the registers the System V ABI has a callee keep, saves the stack pointer in\n"
    " * *from, and resumes the stack at to as a return; the caller keeps every other one. */\n"
    "__attribute__((naked, noinline)) static void switch_stack(void **from, void *to)\n"
    "{\n"
    "    asm(\"pushq %rbp\\n\\tpushq %rbx\\n\\tpushq %r12\\n\\tpushq %r13\\n\\tpushq %r14\\n\\t\"\n"
    "        \"pushq %r15\\n\\tmovq %rsp, (%rdi)\\n\\tmovq %rsi, %rsp\\n\\tpopq %r15\\n\\t\"\n"
    "        \"popq %r14\\n\\tpopq %r13\\n\\tpopq %r12\\n\\tpopq %rbx\\n\\tpopq %rbp\\n\\tret\");\n"
    "}\n"
    "\n"
    "/* The memory clobbers make the compiler store what the other fibers may read (shared\n"
    " * tiles, threadIdx) before the switch and read it again after. */\n"
    "static inline void switch_to(void **from, void *to)\n"
    "{\n"
    "    asm volatile(\"\" ::: \"memory\");\n"
    "    switch_stack(from, to);\n"
    "    asm volatile(\"\" ::: \"memory\");\n"
    "}\n"
    "}\n"
    "\n"
    "static inline void __syncthreads()\n"
    "{\n"
    "    fdt_cpu::team *t = fdt_cpu::current_team;\n"
    "    fdt_cpu::switch_to(&t->fibers[t->running].sp, t->scheduler_sp);\n"
    "}\n";

static const char team_launcher[] =
    "#line 1 \"fdt-cpu-team-launcher\"\n"
    "namespace fdt_cpu {\n"
    "static void team_close(team &t)\n"
    "{\n"
    "    std::free(t.fibers);\n"
    "    if (t.map)\n"
    "        munmap(t.map, t.map_bytes);\n"
    "}\n"
    "\n"
    "/* 0, or the errno of what failed (the team is then closed). */\n"
    "static int team_open(team &t, unsigned count, const void *args)\n"
    "{\n"
    "    const std::size_t page = (std::size_t)sysconf(_SC_PAGESIZE);\n"
    "    t = team{};\n"
    "    t.count = count;\n"
    "    t.args = args;\n"
    "    t.map_bytes = page + (std::size_t)count * FDT_CPU_STACK_BYTES;\n"
    "    void *m = mmap(nullptr, t.map_bytes, PROT_READ | PROT_WRITE,\n"
    "                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);\n"
    "    if (m == MAP_FAILED)\n"
    "        return errno;\n"
    "    t.map = static_cast<char *>(m);\n"
    "    t.stacks = t.map + page;\n"
    "    t.fibers = static_cast<fiber *>(std::calloc(count, sizeof(fiber)));\n"
    "    const int e = !t.fibers ? ENOMEM : mprotect(t.map, page, PROT_NONE) != 0 ? errno : 0;\n"
    "    if (e)\n"
    "        team_close(t);\n"
    "    return e;\n"
    "}\n"
    "\n"
    "/* Fiber i's stack: its lowest byte. */\n"
    "static char *stack_of(const team &t, unsigned i)\n"
    "{\n"
    "    return t.stacks + (std::size_t)i * FDT_CPU_STACK_BYTES;\n"
    "}\n"
    "\n"
    "/* A fresh fiber i whose first switch enters start, its stack aligned as after a call. */\n"
    "static void fiber_prepare(team &t, unsigned i, void (*start)())\n"
    "{\n"
    "    void **top = reinterpret_cast<void **>(stack_of(t, i) + FDT_CPU_STACK_BYTES);\n"
    "    top[-1] = nullptr;                        /* start's return address: it never returns */\n"
    "    top[-2] = reinterpret_cast<void *>(start); /* where switch_stack returns to */\n"
    "    for (int r = 3; r <= 8; r++)\n"
    "        top[-r] = nullptr;                    /* rbp, rbx, r12 to r15 */\n"
    "    t.fibers[i] = {top - 8, false};\n"
    "}\n"
    "\n"
    "template <auto Kernel, typename... P>\n"
    "[[noreturn]] static void fiber_start()\n"
    "{\n"
    "    team *t = current_team;\n"
    "    std::apply(Kernel, *static_cast<const std::tuple<P...> *>(t->args));\n"
    "    t->fibers[t->running].done = true;\n"
    "    void *finished;\n"
    "    switch_to(&finished, t->scheduler_sp);\n"
    "    __builtin_unreachable();\n"
    "}\n"
    "\n"
    "/* Runs the block blockIdx names, in rounds: each resumes every fiber not done yet. */\n"
    "template <auto Kernel, typename... P>\n"
    "static void run_block(team &t)\n"
    "{\n"
    "    for (unsigned i = 0; i < t.count; i++)\n"
    "        fiber_prepare(t, i, fiber_start<Kernel, P...>);\n"
    "    current_team = &t;\n"
    "    const unsigned bx = blockDim.x, by = blockDim.y;\n"
    "    for (unsigned live = t.count; live;)\n"
    "        for (unsigned i = 0; i < t.count; i++) {\n"
    "            if (t.fibers[i].done)\n"
    "                continue;\n"
    "            t.running = i;\n"
    "            threadIdx = {i % bx, i / bx % by, i / (bx * by)};\n"
    "            switch_to(&t.scheduler_sp, t.fibers[i].sp);\n"
    "            live -= t.fibers[i].done;\n"
    "        }\n"
    "}\n"
    "\n"
    "/* 0, or the errno of a team that could not be made (its blocks are then not run). */\n"
    "template <auto Kernel, typename... P>\n"
    "static int run(void (*k)(P...), fdt_cpu_dim3 grid, fdt_cpu_dim3 block, void **args)\n"
    "{\n"
    "    const std::tuple<P...> a = unpack(k, args, std::index_sequence_for<P...>{});\n"
    "    int failed = 0;\n"
    "#pragma omp parallel\n"
    "    {\n"
    "        gridDim = grid;\n"
    "        blockDim = block;\n"
    "        team t;\n"
    "        const int mine = team_open(t, block.x * block.y * block.z, &a);\n"
    "#pragma omp for collapse(3) schedule(static)\n"
    "        for (unsigned bz = 0; bz < grid.z; bz++)\n"
    "            for (unsigned by = 0; by < grid.y; by++)\n"
    "                for (unsigned bx = 0; bx < grid.x; bx++)\n"
    "                    if (!mine) {\n"
    "                        blockIdx = {bx, by, bz};\n"
    "                        run_block<Kernel, P...>(t);\n"
    "                    }\n"
    "        if (!mine)\n"
    "            team_close(t);\n"
    "        else {\n"
    "#pragma omp atomic write\n"
    "            failed = mine;\n"
    "        }\n"
    "    }\n"
    "    return failed;\n"
    "}\n"
    "}\n"
    "\n"
    "extern \"C\" int fdt_cpu_launch_teams(unsigned gx, unsigned gy, unsigned gz,\n"
    "                                    unsigned bx, unsigned by, unsigned bz, void **args)\n"
    "{\n"
    "    return fdt_cpu::run<FDT_CPU_ENTRY>(FDT_CPU_ENTRY, {gx, gy, gz}, {bx, by, bz}, args);\n"
    "}\n";

/* Each GPU thread's stack in a team. The kernels' frames take a few hundred bytes (xytile
 * at radius 4 with m 4: 224), and a signal's handler may run on one too; only the pages
 * touched are ever backed. */
enum { TEAM_STACK_BYTES = 64 << 10 };

typedef void (*launch_fn)(unsigned gx, unsigned gy, unsigned gz,
                          unsigned bx, unsigned by, unsigned bz, void **args);
/* 0, or the errno of a team that could not be made. */
typedef int (*team_launch_fn)(unsigned gx, unsigned gy, unsigned gz,
                              unsigned bx, unsigned by, unsigned bz, void **args);

struct fdt_backend {
    fdt_device_info info;
    struct timespec marks[FDT_TIMER_LAPS + 2]; /* the start, the laps, the end */
    int nmarks;
};

struct fdt_kernel {
    void *lib;
    /* One of the two, by the kernel: a team launch can fail (its stacks), and an object an
     * older build compiled and the code cache kept exports fdt_cpu_launch alone. */
    launch_fn launch;            /* a kernel without barriers */
    team_launch_fn launch_teams; /* a kernel with barriers */
    int fd;         /* the memfd holding the shared object; it names the library */
    char path[32];  /* /proc/self/fd/<fd> */
};

/* ---- running the compiler ---- */

/* One output stream of a child: the first bytes are kept, the rest drained and dropped. */
typedef struct capture {
    int fd;          /* the pipe's read end; -1 once nothing more comes */
    char text[4096];
    size_t len;
} capture;

typedef struct child {
    pid_t pid;
    capture out, errs;
    int exit_status; /* meaningful where term_signal is 0 */
    int status_unknown; /* reaped by someone else: exit_status says 0 */
    int term_signal;
} child;

/* The compiler command: $CXX split at blanks (CXX="ccache g++" is common in CI), else c++. */
enum { MAX_CXX_WORDS = 8 };
typedef struct cxx_command {
    char words[256];
    char *argv[MAX_CXX_WORDS];
    size_t argc;
} cxx_command;

static fdt_status cxx_command_get(cxx_command *c, fdt_error *err)
{
    const char *cxx = getenv("CXX");
    if (!cxx || !*cxx)
        cxx = "c++";
    if (snprintf(c->words, sizeof c->words, "%s", cxx) >= (int)sizeof c->words)
        return fdt_fail(err, FDT_ERROR, "CXX is too long: %s", cxx);
    c->argc = 0;
    char *save = NULL;
    for (char *w = strtok_r(c->words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (c->argc == MAX_CXX_WORDS)
            return fdt_fail(err, FDT_ERROR, "CXX has more than %d words: %s", MAX_CXX_WORDS, cxx);
        c->argv[c->argc++] = w;
    }
    if (c->argc == 0)
        return fdt_fail(err, FDT_ERROR, "CXX is blank");
    return FDT_OK;
}

/* A pipe for one of the child's output streams. Close-on-exec, because compile() runs on
 * several threads: a compiler spawned meanwhile by another thread would otherwise inherit this
 * pipe's write end and keep it from ending until that compiler exits. The write end is moved
 * above 0, 1 and 2, where a process started with one of those closed may have found it, so
 * that the child's dup2() onto those cannot overwrite it. Returns 0 or an error number. */
static int child_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return errno;
    if (fds[1] > STDERR_FILENO)
        return 0;
    const int moved = fcntl(fds[1], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    const int e = errno;
    close(fds[1]);
    if (moved < 0) {
        close(fds[0]);
        return e;
    }
    fds[1] = moved;
    return 0;
}

/* stdin from /dev/null, stdout and stderr into the pipes, then dir where given. */
static int child_files(posix_spawn_file_actions_t *fa, int out, int errs, const char *dir)
{
    int rc = posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(fa, out, STDOUT_FILENO);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(fa, errs, STDERR_FILENO);
    if (rc == 0 && dir)
        rc = posix_spawn_file_actions_addchdir_np(fa, dir);
    return rc;
}

/* Signals as a new process has them, none blocked or ignored, whatever the calling thread's
 * mask and this process's dispositions (a solver's own, in libfdtune): the compiler must stop
 * on the signals it would stop on from a shell. libuv's spawn, used before, did the same. */
static int child_signals(posix_spawnattr_t *attr)
{
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    int rc = posix_spawnattr_setsigmask(attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(attr, &all);
    if (rc == 0)
        rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    return rc;
}

/* environ with TMPDIR set to dir, in tmpdir's room: the compiler's own temporary files then
 * land in the compile's folder, which the sweep removes if the compile is killed. NULL when
 * out of memory or the path does not fit. */
static char **child_environment(const char *dir, char *tmpdir, size_t len)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = malloc((n + 2) * sizeof *env);
    if (!env || snprintf(tmpdir, len, "TMPDIR=%s", dir) >= (int)len) {
        free(env);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0)
            env[k++] = environ[i];
    env[k++] = tmpdir;
    env[k] = NULL;
    return env;
}

/* Spawns argv (argv[0] searched in PATH) with its output into the write ends out and errs,
 * in dir (with TMPDIR there too) when given; returns 0 or an error number. */
static int child_spawn(char **argv, const char *dir, int out, int errs, pid_t *pid)
{
    char tmpdir[PATH_MAX + 8];
    char **env = dir ? child_environment(dir, tmpdir, sizeof tmpdir) : environ;
    if (!env)
        return ENOMEM;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawnattr_init(&attr);
        if (rc == 0) {
            rc = child_files(&fa, out, errs, dir);
            if (rc == 0)
                rc = child_signals(&attr);
            if (rc == 0)
                rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, env);
            posix_spawnattr_destroy(&attr);
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    if (env != environ)
        free(env);
    return rc;
}

static void capture_start(capture *c, int fd)
{
    c->fd = fd;
    c->len = 0;
    c->text[0] = '\0';
}

static void capture_end(capture *c)
{
    close(c->fd);
    c->fd = -1;
}

/* Starts the child with both pipes; returns 0 or an error number. */
static int child_start(char **argv, const char *dir, child *ch)
{
    int out[2], errs[2];
    int rc = child_pipe(out);
    if (rc)
        return rc;
    rc = child_pipe(errs);
    if (rc) {
        close(out[0]);
        close(out[1]);
        return rc;
    }
    rc = child_spawn(argv, dir, out[1], errs[1], &ch->pid);
    /* The child has its own copies of the write ends; ours would keep the pipes from ending. */
    close(out[1]);
    close(errs[1]);
    if (rc) {
        close(out[0]);
        close(errs[0]);
        return rc;
    }
    capture_start(&ch->out, out[0]);
    capture_start(&ch->errs, errs[0]);
    return 0;
}

/* Reads what the pipe has, which poll() said will not block: into text while it has room,
 * then into a scratch buffer that is dropped. */
static void capture_read(capture *c)
{
    char spill[4096];
    const size_t room = sizeof c->text - 1 - c->len;
    const ssize_t n = read(c->fd, room ? c->text + c->len : spill, room ? room : sizeof spill);
    if (n > 0 && room) {
        c->len += (size_t)n;
        c->text[c->len] = '\0';
    } else if (n == 0 || (n < 0 && errno != EINTR)) {
        capture_end(c); /* EOF, or the pipe failed: either way nothing more comes */
    }
}

/* Reads both pipes until both end: reading one only could leave the child blocked on a full
 * other. Returns 0, or poll()'s error number after closing both: the child then fails at its
 * next write, and is still waited for. */
static int child_drain(child *ch)
{
    capture *const c[2] = {&ch->out, &ch->errs};
    while (c[0]->fd >= 0 || c[1]->fd >= 0) {
        /* poll() skips an entry whose fd is negative: a stream that has ended. */
        struct pollfd p[2] = {{.fd = c[0]->fd, .events = POLLIN},
                              {.fd = c[1]->fd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            const int e = errno;
            for (int i = 0; i < 2; i++)
                if (c[i]->fd >= 0)
                    capture_end(c[i]);
            return e;
        }
        for (int i = 0; i < 2; i++)
            if (p[i].revents)
                capture_read(c[i]);
    }
    return 0;
}

/* Reaps the child; returns 0 or waitpid()'s error number. A solver that ignores SIGCHLD
 * (or reaps every child itself) leaves no status to wait for: ECHILD. Then the exit status
 * is unknown, and the outputs tell (build_so looks for the object it asked for). */
static int child_wait(child *ch)
{
    int status;
    ch->status_unknown = 0;
    while (waitpid(ch->pid, &status, 0) < 0) {
        if (errno == ECHILD) {
            ch->status_unknown = 1;
            ch->exit_status = 0;
            ch->term_signal = 0;
            return 0;
        }
        if (errno != EINTR)
            return errno;
    }
    ch->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    ch->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return 0;
}

/* Runs argv (argv[0] searched in PATH) in dir, which must exist (a failed chdir would read as
 * a missing compiler), and waits for it, capturing its output. Everything is on the caller's
 * stack and file descriptors, so that compile() can run it on several threads at once. */
static fdt_status child_run(char **argv, const char *dir, child *ch, fdt_error *err)
{
    int rc = child_start(argv, dir, ch);
    if (rc == ENOENT)
        return fdt_fail(err, FDT_ERROR, "C++ compiler '%s' not found (install g++ or set CXX)",
                        argv[0]);
    if (rc)
        return fdt_fail(err, FDT_ERROR, "cannot run %s: %s", argv[0], strerror(rc));
    const int drained = child_drain(ch);
    rc = child_wait(ch);
    if (rc)
        return fdt_fail(err, FDT_ERROR, "cannot wait for %s: %s", argv[0], strerror(rc));
    if (drained)
        return fdt_fail(err, FDT_ERROR, "cannot read %s's output: %s", argv[0], strerror(drained));
    if (ch->term_signal)
        return fdt_fail(err, FDT_ERROR, "%s killed by signal %d", argv[0], ch->term_signal);
    return FDT_OK;
}

/* The first line of `$CXX flag`'s output, or "" where the flag fails. */
static fdt_status cxx_query(const char *flag, char *line, size_t len, fdt_error *err)
{
    cxx_command c;
    fdt_status s = cxx_command_get(&c, err);
    if (s != FDT_OK)
        return s;
    char *argv[MAX_CXX_WORDS + 2];
    memcpy(argv, c.argv, c.argc * sizeof *argv);
    argv[c.argc] = (char *)flag;
    argv[c.argc + 1] = NULL;
    child ch;
    s = child_run(argv, NULL, &ch, err);
    if (s != FDT_OK)
        return s;
    const char *out = ch.exit_status == 0 ? ch.out.text : "";
    snprintf(line, len, "%.*s", (int)strcspn(out, "\r\n"), out);
    return FDT_OK;
}

static fdt_status cpu_compiler_version(char *out, size_t len, fdt_error *err)
{
    char version[32];
    fdt_status s = cxx_query("-dumpfullversion", version, sizeof version, err);
    if (s == FDT_OK && version[0]) {
        const char *cxx = getenv("CXX");
        snprintf(out, len, "%s %s", cxx && *cxx ? cxx : "c++", version);
        return FDT_OK;
    }
    /* Compilers without -dumpfullversion name themselves on --version's first line. */
    if (s == FDT_OK)
        s = cxx_query("--version", out, len, err);
    if (s == FDT_OK && !out[0])
        s = fdt_fail(err, FDT_ERROR, "the C++ compiler reports no version");
    return s;
}

/* ---- compile ---- */

/* The files of one compile, in a private directory so that concurrent compiles never meet.
 * Its name holds the compiling process's pid (fdt-cpu-PID-XXXXXX), and the process holds a
 * lock on it for as long as it compiles. */
typedef struct workdir {
    char dir[PATH_MAX - 16]; /* leaves room for the file names below */
    char src[PATH_MAX];
    char so[PATH_MAX];
    int fd;                  /* the directory, flock'ed */
} workdir;

static const char *temp_root(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

/* Removes the entries of the open directory fd (closed here), then the directory `name` in
 * root; a folder inside it (unlinkat refuses one) stays, and so does this one then. */
static void remove_folder(int fd, int root, const char *name)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(dirfd(d), e->d_name, 0);
    unlinkat(root, name, AT_REMOVEDIR);
    closedir(d);
}

/* The pid in a work folder's name, exactly as workdir_make writes it, or 0. */
static long workdir_pid(const char *name)
{
    long pid = 0;
    char suffix[8], expected[64];
    if (sscanf(name, "fdt-cpu-%ld-%7s", &pid, suffix) != 2 || pid <= 0 || pid > INT_MAX ||
        strlen(suffix) != 6)
        return 0;
    snprintf(expected, sizeof expected, "fdt-cpu-%ld-%s", pid, suffix);
    return strcmp(expected, name) == 0 ? pid : 0;
}

/* Whether the folder `name` in root (open as fd) was left by a compile that is gone: the
 * process it names no longer exists here, and nobody holds its lock (a process of another
 * pid namespace sharing this TMPDIR may have the same pid, or another's may be reused). */
static int abandoned(int fd, const char *name)
{
    const long pid = workdir_pid(name);
    struct stat st;
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH && fstat(fd, &st) == 0 &&
           S_ISDIR(st.st_mode) && st.st_uid == geteuid() && flock(fd, LOCK_EX | LOCK_NB) == 0;
}

/* A compile killed with its process (kill -9, or a helper ended with its worker) leaves its
 * folder behind, and a daemon that runs for months would fill the temporary directory. So
 * the first compile of each process removes the abandoned folders: this uid's, by this
 * exact name, opened without following links. */
static void sweep_stale_workdirs(void)
{
    DIR *d = opendir(temp_root());
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!workdir_pid(e->d_name))
            continue;
        const int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && abandoned(fd, e->d_name))
            remove_folder(fd, dirfd(d), e->d_name);
        else if (fd >= 0)
            close(fd);
    }
    closedir(d);
}

static fdt_status workdir_make(workdir *w, fdt_error *err)
{
    static pthread_once_t swept = PTHREAD_ONCE_INIT;
    pthread_once(&swept, sweep_stale_workdirs);
    const char *tmp = temp_root();
    if (snprintf(w->dir, sizeof w->dir, "%s/fdt-cpu-%ld-XXXXXX", tmp, (long)getpid()) >=
        (int)sizeof w->dir)
        return fdt_fail(err, FDT_ERROR, "TMPDIR is too long: %s", tmp);
    if (!mkdtemp(w->dir))
        return fdt_fail(err, FDT_ERROR, "mkdtemp %s: %m", w->dir);
    w->fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (w->fd < 0 || flock(w->fd, LOCK_EX) != 0) {
        if (w->fd >= 0)
            close(w->fd);
        rmdir(w->dir);
        return fdt_fail(err, FDT_ERROR, "cannot lock %s: %m", w->dir);
    }
    snprintf(w->src, sizeof w->src, "%s/kernel.cpp", w->dir);
    snprintf(w->so, sizeof w->so, "%s/kernel.so", w->dir);
    return FDT_OK;
}

static void workdir_remove(const workdir *w)
{
    remove_folder(w->fd, AT_FDCWD, w->dir);
}

static fdt_status write_unit(const char *path, const char *source, const char *entry,
                             fdt_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return fdt_fail(err, FDT_ERROR, "cannot create %s: %m", path);
    /* A source that merely mentions __syncthreads takes the teams too: slower, as right. */
    const int teams = strstr(source, "__syncthreads") != NULL;
    fprintf(f, "#define FDT_CPU_ENTRY %s\n#define FDT_CPU_STACK_BYTES %d\n%s%s", entry,
            TEAM_STACK_BYTES, unit_prelude, teams ? team_machinery : "");
    fprintf(f, "#line 1 \"kernel\"\n%s\n%s", source, teams ? team_launcher : sequential_launcher);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return fdt_fail(err, FDT_ERROR, "cannot write %s", path);
    return FDT_OK;
}

static fdt_status build_so(const workdir *w, const char *const *defines, size_t ndefines,
                           fdt_error *err)
{
    /* The entry point is exported, so without -fno-semantic-interposition it is called
     * through the PLT and never inlined into the launcher's loops: ten times slower. */
    static const char *const flags[] = {"-O3", "-fopenmp", "-shared", "-fPIC",
                                        "-fno-semantic-interposition", "-std=c++17",
                                        "-DFDT_CPU=1"};
    enum { NFLAGS = sizeof flags / sizeof flags[0] };
    cxx_command c;
    fdt_status s = cxx_command_get(&c, err);
    if (s != FDT_OK)
        return s;
    char **argv = malloc((c.argc + NFLAGS + 2 * ndefines + 4) * sizeof *argv);
    if (!argv)
        return fdt_fail(err, FDT_ERROR, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < c.argc; i++)
        argv[n++] = c.argv[i];
    for (size_t i = 0; i < NFLAGS; i++)
        argv[n++] = (char *)flags[i];
    for (size_t i = 0; i < ndefines; i++) {
        argv[n++] = "-D";
        argv[n++] = (char *)defines[i];
    }
    argv[n++] = "-o";
    argv[n++] = (char *)w->so;
    argv[n++] = (char *)w->src;
    argv[n] = NULL;
    child ch;
    s = child_run(argv, w->dir, &ch, err);
    free(argv);
    const int failed = ch.status_unknown ? access(w->so, F_OK) != 0 : ch.exit_status != 0;
    if (s == FDT_OK && failed)
        s = fdt_fail(err, FDT_COMPILE_ERROR, "%s", ch.errs.len ? ch.errs.text : ch.out.text);
    return s;
}

static fdt_status read_whole(const char *path, fdt_code *out, fdt_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fdt_fail(err, FDT_ERROR, "cannot open %s: %m", path);
    struct stat st;
    fdt_status s = FDT_OK;
    if (fstat(fileno(f), &st) != 0 || !(out->data = malloc((size_t)st.st_size + 1)))
        s = fdt_fail(err, FDT_ERROR, "cannot read %s", path);
    else if ((out->size = fread(out->data, 1, (size_t)st.st_size, f)) != (size_t)st.st_size) {
        fdt_code_free(out);
        s = fdt_fail(err, FDT_ERROR, "short read from %s", path);
    }
    fclose(f);
    return s;
}

/* "host", or this host's architecture as info() names it (what the runner passes on). */
static int is_host_arch(const char *arch)
{
    struct utsname u;
    return strcmp(arch, "host") == 0 || (uname(&u) == 0 && strcmp(arch, u.machine) == 0);
}

static fdt_status cpu_compile(const char *arch, const char *source, const char *entry,
                              const char *const *defines, size_t ndefines,
                              fdt_code *out, fdt_error *err)
{
    if (!is_host_arch(arch))
        return fdt_fail(err, FDT_ERROR, "the cpu backend compiles only for this host, not '%s'",
                        arch);
    workdir w;
    fdt_status s = workdir_make(&w, err);
    if (s != FDT_OK)
        return s;
    s = write_unit(w.src, source, entry, err);
    if (s == FDT_OK)
        s = build_so(&w, defines, ndefines, err);
    if (s == FDT_OK)
        s = read_whole(w.so, out, err);
    workdir_remove(&w);
    return s;
}

/* ---- device ---- */

/* The value of the first "key : value" line of /proc/cpuinfo, or fallback. */
static void cpuinfo_field(const char *key, char *out, size_t len, const char *fallback)
{
    snprintf(out, len, "%s", fallback);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    size_t klen = strlen(key);
    while (getline(&line, &cap, f) > 0) {
        const char *rest = line + klen;
        if (strncmp(line, key, klen) != 0 || rest[strspn(rest, " \t")] != ':')
            continue;
        const char *value = rest + strspn(rest, " \t") + 1;
        value += strspn(value, " \t");
        snprintf(out, len, "%.*s", (int)strcspn(value, "\n"), value);
        break;
    }
    free(line);
    fclose(f);
}

/* Cache index i of cpu0 as the kernel lists it (/sys/devices/system/cpu/cpu0/cache): its
 * level, and its size in bytes where it holds data (0 for an instruction cache). 0, or -1
 * when there is no index i. */
static int cache_index(int i, long *level, uint64_t *bytes)
{
    static const char *const names[] = {"level", "type", "size"};
    char text[3][32] = {"", "", ""};
    for (int n = 0; n < 3; n++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", i, names[n]);
        FILE *f = fopen(path, "r");
        if (!f || !fgets(text[n], sizeof text[n], f)) {
            if (f)
                fclose(f);
            return -1;
        }
        fclose(f);
    }
    unsigned long long kib = 0;
    *level = strtol(text[0], NULL, 10);
    *bytes = strncmp(text[1], "Instruction", 11) != 0 && sscanf(text[2], "%lluK", &kib) == 1
                 ? (uint64_t)kib * 1024 : 0;
    return 0;
}

/* The last-level cache, in bytes: of cpu0's caches the one of the highest level that holds
 * data, which its complex's cores share as a GPU's SMs share its L2; 0 where the kernel lists
 * none. Not sysconf(_SC_LEVEL3_CACHE_SIZE): glibc reads that from cpuid, which under some
 * hypervisors gives the whole socket's (320 MiB where cpu0's complex has 32). */
static uint64_t last_level_cache(void)
{
    long best = 0, level;
    uint64_t bytes, last = 0;
    for (int i = 0; cache_index(i, &level, &bytes) == 0; i++)
        if (bytes && level > best) {
            best = level;
            last = bytes;
        }
    return last;
}

static void host_info(fdt_device_info *in)
{
    struct utsname u;
    uname(&u);
    snprintf(in->backend, sizeof in->backend, "cpu");
    cpuinfo_field("vendor_id", in->vendor, sizeof in->vendor, "unknown");
    cpuinfo_field("model name", in->name, sizeof in->name, "unknown");
    snprintf(in->arch, sizeof in->arch, "%.*s", (int)sizeof in->arch - 1, u.machine);
    in->compute_units = (int)sysconf(_SC_NPROCESSORS_ONLN);
    in->memory_bytes = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    in->l2_bytes = last_level_cache();
    snprintf(in->driver_version, sizeof in->driver_version, "Linux %.*s",
             (int)sizeof in->driver_version - 7, u.release);
    in->warp_size = 32;
    in->max_threads_per_block = 1024;
    in->max_shared_per_block = 49152;
    in->max_grid[0] = 2147483647;
    in->max_grid[1] = 65535;
    in->max_grid[2] = 65535;
#if defined(__x86_64__)
    in->block_barriers = 1; /* the teams' switch is x86-64 code (team_machinery) */
#else
    in->block_barriers = 0;
#endif
}

static int cpu_devices = 1;

void fdt_cpu_set_devices(int n)
{
    cpu_devices = n < 1 ? 1 : n > 64 ? 64 : n;
}

static fdt_status cpu_open(int device, fdt_backend **out, fdt_error *err)
{
    if (device < 0 || device >= cpu_devices)
        return fdt_fail(err, FDT_ERROR, "the cpu backend has %d device%s (0 to %d), not %d",
                        cpu_devices, cpu_devices > 1 ? "s" : "", cpu_devices - 1, device);
    fdt_backend *b = calloc(1, sizeof *b);
    if (!b)
        return fdt_fail(err, FDT_ERROR, "out of memory");
    host_info(&b->info);
    /* The compiler is part of the device's identity: results keyed without it would mix. */
    fdt_status s = cpu_compiler_version(b->info.compiler_version,
                                        sizeof b->info.compiler_version, err);
    if (s != FDT_OK) {
        free(b);
        return s;
    }
    *out = b;
    return FDT_OK;
}

/* The host is the device every thread uses, and launches run at once on the calling thread:
 * there is no context to share and no queue to put work on, so the stream goes unused. */
static fdt_status cpu_attach(int device, void *stream, fdt_backend **out, fdt_error *err)
{
    (void)stream;
    return cpu_open(device < 0 ? 0 : device, out, err);
}

static void cpu_close(fdt_backend *b)
{
    free(b);
}

static const fdt_device_info *cpu_info(fdt_backend *b)
{
    return &b->info;
}

/* ---- modules ---- */

/* The OpenMP runtime keeps its worker threads after a parallel region; were it unloaded with
 * the last kernel using it, they would run unmapped code. So it stays loaded for good. */
static void pin_openmp_runtime(void *lib)
{
    Dl_info where;
    void *sym = dlsym(lib, "omp_get_num_threads");
    if (sym && dladdr(sym, &where))
        dlopen(where.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* The shared object goes into an anonymous file, so nothing is left on disk and a noexec
 * /tmp does not matter. */
static fdt_status cpu_load(fdt_backend *b, const fdt_code *code, const char *entry,
                           fdt_kernel **out, fdt_error *err)
{
    (void)b;
    fdt_kernel *k = calloc(1, sizeof *k);
    if (!k)
        return fdt_fail(err, FDT_ERROR, "out of memory");
    k->fd = memfd_create("fdt-cpu-kernel", MFD_CLOEXEC);
    if (k->fd < 0 || fdt_write_all(k->fd, code->data, code->size) != 0) {
        fdt_fail(err, FDT_ERROR, "cannot stage the kernel's shared object: %m");
        goto fail;
    }
    snprintf(k->path, sizeof k->path, "/proc/self/fd/%d", k->fd);
    k->lib = dlopen(k->path, RTLD_NOW | RTLD_LOCAL);
    if (!k->lib) {
        fdt_fail(err, FDT_ERROR, "dlopen: %s", dlerror());
        goto fail;
    }
    k->launch = (launch_fn)dlsym(k->lib, "fdt_cpu_launch");
    k->launch_teams = (team_launch_fn)dlsym(k->lib, "fdt_cpu_launch_teams");
    if ((!k->launch && !k->launch_teams) || !dlsym(k->lib, entry)) {
        fdt_fail(err, FDT_ERROR, "the code object has no launcher for kernel '%s'", entry);
        dlclose(k->lib);
        goto fail;
    }
    pin_openmp_runtime(k->lib);
    *out = k;
    return FDT_OK;
fail:
    if (k->fd >= 0)
        close(k->fd);
    free(k);
    return err ? err->status : FDT_ERROR;
}

static void cpu_unload(fdt_backend *b, fdt_kernel *k)
{
    (void)b;
    dlclose(k->lib);
    /* glibc finds an already loaded library by its name before opening anything, and the
     * name here is the fd's. A library that stays loaded (NODELETE, e.g. from C++ unique
     * symbols) therefore keeps its fd, or the next kernel given that fd would get it. */
    void *still = dlopen(k->path, RTLD_NOW | RTLD_NOLOAD);
    if (still)
        dlclose(still);
    else
        close(k->fd);
    free(k);
}

static void cpu_resources(fdt_kernel *k, fdt_resources *out)
{
    (void)k;
    *out = (fdt_resources){.vgprs = -1, .sgprs = -1, .scratch_bytes = -1, .shared_bytes = -1,
                           .max_threads = -1};
}

/* ---- memory ---- */

static void *host_ptr(fdt_devptr p)
{
    return (void *)(uintptr_t)p;
}

static fdt_status cpu_alloc(fdt_backend *b, size_t bytes, fdt_devptr *out, fdt_error *err)
{
    (void)b;
    /* 256 bytes, as cudaMalloc's and hipMalloc's: a problem's layout offset counts from a
     * 256-byte-aligned base (common/problem.h). aligned_alloc wants a multiple of it. */
    size_t rounded = (bytes + 255) / 256 * 256;
    void *p = aligned_alloc(256, rounded ? rounded : 256);
    if (!p)
        return fdt_fail(err, FDT_ERROR, "cannot allocate %zu bytes", bytes);
    *out = (fdt_devptr)(uintptr_t)p;
    return FDT_OK;
}

static void cpu_free(fdt_backend *b, fdt_devptr p)
{
    (void)b;
    free(host_ptr(p));
}

static fdt_status cpu_upload(fdt_backend *b, fdt_devptr dst, const void *src, size_t bytes,
                             fdt_error *err)
{
    (void)b;
    (void)err;
    memcpy(host_ptr(dst), src, bytes);
    return FDT_OK;
}

static fdt_status cpu_download(fdt_backend *b, void *dst, fdt_devptr src, size_t bytes,
                               fdt_error *err)
{
    (void)b;
    (void)err;
    memcpy(dst, host_ptr(src), bytes);
    return FDT_OK;
}

static fdt_status cpu_fill32(fdt_backend *b, fdt_devptr dst, uint32_t value, size_t count,
                             fdt_error *err)
{
    (void)b;
    (void)err;
    uint32_t *p = host_ptr(dst);
    for (size_t i = 0; i < count; i++)
        p[i] = value;
    return FDT_OK;
}

static fdt_status cpu_copy(fdt_backend *b, fdt_devptr dst, fdt_devptr src, size_t bytes,
                           fdt_error *err)
{
    (void)b;
    (void)err;
    memcpy(host_ptr(dst), host_ptr(src), bytes);
    return FDT_OK;
}

/* ---- launch and timing ---- */

/* The limits info() advertises, enforced as a GPU driver would, so variants fail alike. */
static int launch_fits(const fdt_device_info *in, fdt_dim3 g, fdt_dim3 t)
{
    uint64_t threads = (uint64_t)t.x * t.y * t.z;
    return g.x && g.y && g.z && g.x <= in->max_grid[0] && g.y <= in->max_grid[1] &&
           g.z <= in->max_grid[2] && threads && threads <= (uint64_t)in->max_threads_per_block;
}

static fdt_status cpu_launch(fdt_backend *b, fdt_kernel *k, fdt_dim3 grid, fdt_dim3 block,
                             void **args, fdt_error *err)
{
    if (!launch_fits(&b->info, grid, block))
        return fdt_fail(err, FDT_LAUNCH_ERROR, "invalid launch: grid (%u,%u,%u) block (%u,%u,%u)",
                        grid.x, grid.y, grid.z, block.x, block.y, block.z);
    if (!k->launch_teams) {
        k->launch(grid.x, grid.y, grid.z, block.x, block.y, block.z, args);
        return FDT_OK;
    }
    const int e = k->launch_teams(grid.x, grid.y, grid.z, block.x, block.y, block.z, args);
    if (e)
        return fdt_fail(err, FDT_LAUNCH_ERROR, "cannot make the stacks of a block's %u threads: "
                        "%s", block.x * block.y * block.z, strerror(e));
    return FDT_OK;
}

/* Launches here are synchronous: by the time this runs, nothing is left to wait for. */
static fdt_status cpu_sync(fdt_backend *b, fdt_error *err)
{
    (void)b;
    (void)err;
    return FDT_OK;
}

static fdt_status mark(fdt_backend *b, fdt_error *err)
{
    if (b->nmarks >= FDT_TIMER_LAPS + 2)
        return fdt_fail(err, FDT_ERROR, "cpu backend: more than %d laps", FDT_TIMER_LAPS);
    clock_gettime(CLOCK_MONOTONIC, &b->marks[b->nmarks++]);
    return FDT_OK;
}

static double between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) * 1e-6;
}

static fdt_status cpu_timer_start(fdt_backend *b, fdt_error *err)
{
    b->nmarks = 0;
    return mark(b, err);
}

static fdt_status cpu_timer_lap(fdt_backend *b, fdt_error *err)
{
    return b->nmarks < FDT_TIMER_LAPS + 1
               ? mark(b, err)
               : fdt_fail(err, FDT_ERROR, "cpu backend: more than %d laps", FDT_TIMER_LAPS);
}

/* Launches here are synchronous, so by the time this runs the kernels have finished: a hung
 * kernel blocks in launch() and cannot be interrupted; an overrun is reported after it. */
static fdt_status cpu_timer_stop(fdt_backend *b, double timeout_ms, double *elapsed_ms,
                                 fdt_error *err)
{
    if (b->nmarks == 0)
        return fdt_fail(err, FDT_ERROR, "cpu backend: timer not started");
    const fdt_status s = mark(b, err);
    if (s != FDT_OK)
        return s;
    *elapsed_ms = between(&b->marks[0], &b->marks[b->nmarks - 1]);
    if (*elapsed_ms > timeout_ms)
        return fdt_fail(err, FDT_TIMEOUT, "kernels took %.1f ms, over the %.1f ms limit",
                        *elapsed_ms, timeout_ms);
    return FDT_OK;
}

static fdt_status cpu_timer_split(fdt_backend *b, int i, double *ms, fdt_error *err)
{
    if (i < 0 || i + 1 >= b->nmarks)
        return fdt_fail(err, FDT_ERROR, "cpu backend: no split %d", i);
    *ms = between(&b->marks[i], &b->marks[i + 1]);
    return FDT_OK;
}

const fdt_backend_ops fdt_backend_cpu = {
    .name = "cpu",
    .compiler_version = cpu_compiler_version,
    .compile = cpu_compile,
    /* Each compile is a process of its own already. */
    .compiles_one_at_a_time = 0,
    .open = cpu_open,
    .attach = cpu_attach,
    .close = cpu_close,
    .info = cpu_info,
    .load = cpu_load,
    .unload = cpu_unload,
    .resources = cpu_resources,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .fill32 = cpu_fill32,
    .copy = cpu_copy,
    .launch = cpu_launch,
    .sync = cpu_sync,
    .timer_start = cpu_timer_start,
    .timer_lap = cpu_timer_lap,
    .timer_stop = cpu_timer_stop,
    .timer_split = cpu_timer_split,
};
