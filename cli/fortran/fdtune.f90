! fdtune.f90 - Fortran 2008 bindings of libfdtune: the query API of fdtune.h and the
! kernel API of fdtune_kernel.h, through iso_c_binding.
!
! The module holds only interfaces, bind(C) types and parameters, so it needs no object
! code: a solver needs fdtune.mod (compile this file once with its own compiler, e.g.
! `gfortran -std=f2008 -J DIR -c fdtune.f90`) and -lfdtune, nothing else.
!
!     use fdtune
!     type(c_ptr) :: dev, k             ! opaque handles: fdtune_device *, fdtune_kernel *
!     character(kind=c_char, len=512) :: err
!     if (fdtune_device_open('auto'//c_null_char, -1, c_null_ptr, dev, err, &
!                            len(err, c_size_t)) /= FDTUNE_OK) then
!         print '(a)', err(1:index(err, c_null_char) - 1); error stop
!     end if
!     st = fdtune_kernel_open(dev, fdtune_problem(nx=512, ny=512, nz=512), &
!                             fdtune_kernel_options(), k, err, len(err, c_size_t))
!     do step = 1, nsteps                ! f, u: type(c_ptr) device buffers (fdtune_alloc)
!         st = fdtune_kernel_launch(k, f, u, 1/hx**2, 1/hy**2, 1/hz**2, err, len(err, c_size_t))
!     end do
!     call fdtune_kernel_close(k); call fdtune_device_close(dev)
!
! A stencil of the solver's own (a spec, docs/stencils.md) is opened from its JSON text with
! fdtune_kernel_open_spec(dev, p, spec//c_null_char, ...) and launched with
! fdtune_kernel_launch_fields(k, [out], [in1, in2, coef], [c1, c2, c3], err, errlen):
! examples/wave.f90.
!
! How C maps to Fortran here:
! - Handles (fdtune_conn *, fdtune_device *, fdtune_kernel *, fdtune_function *) and
!   buffers are type(c_ptr); a handle the call creates is an intent(out) type(c_ptr).
! - Strings the library reads are NUL-terminated character(kind=c_char) arrays: pass
!   'text'//c_null_char. Where NULL means something ("the default socket"), the argument
!   is a type(c_ptr), value: c_null_ptr, or c_loc of a NUL-terminated target string.
! - err is a character(kind=c_char) variable of any length, errlen len(err, c_size_t); the
!   library writes a NUL-terminated C string into it: err(1:index(err, c_null_char) - 1).
! - Strings the library returns (const char *) are type(c_ptr); fdtune_c_strlen gives
!   their length for c_f_pointer. fdtune_request's answer is released with fdtune_c_free.
!   These two are libc's strlen and free, bound here because Fortran has neither.
! - Char arrays inside the structs are arrays of single characters, NUL-terminated; the
!   C arrays of strings are 2-D with the indices reversed: C a.sources[i] is Fortran
!   a%sources(:, i + 1). int arrays keep their order, 1-based: C grid[0] is grid(1).
! - fdtune_problem and fdtune_kernel_options are default-initialized to zero, which is
!   what C's `= {0}` gives and what the library reads as "the defaults"; so
!   fdtune_kernel_options() stands for the C NULL options.
module fdtune
    use, intrinsic :: iso_c_binding
    implicit none
    public

    ! fdtune_status
    integer(c_int), parameter :: FDTUNE_OK = 0
    integer(c_int), parameter :: FDTUNE_ERR_CONNECT = -1 ! the daemon cannot be reached
    integer(c_int), parameter :: FDTUNE_ERR_IO = -2      ! connection broke, or timed out
    integer(c_int), parameter :: FDTUNE_ERR_ANSWER = -3  ! the answer breaks the protocol
    integer(c_int), parameter :: FDTUNE_ERR_REFUSED = -4 ! the daemon answered an error
    integer(c_int), parameter :: FDTUNE_ERR_ARG = -5     ! a bad argument to the library
    integer(c_int), parameter :: FDTUNE_ERR_DEVICE = -6  ! device, runtime or compiler failed
    integer(c_int), parameter :: FDTUNE_ERR_COMPILE = -7 ! a source did not compile
    integer(c_int), parameter :: FDTUNE_ERR_LAYOUT = -8  ! a field is not in the kernel's layout

    integer(c_int), parameter :: FDTUNE_DEFAULT_TIMEOUT_MS = 30000

    ! fdtune_precision, fdtune_cache (C enums: int on every ABI libfdtune supports)
    integer(c_int), parameter :: FDTUNE_DOUBLE = 0, FDTUNE_FLOAT = 1
    integer(c_int), parameter :: FDTUNE_HOT = 0, FDTUNE_COLD = 1, FDTUNE_PERSIST = 2, FDTUNE_AUTO = 3

    integer(c_int), parameter :: FDTUNE_NAME_MAX = 128
    integer(c_int), parameter :: FDTUNE_DEFINES_MAX = 32
    integer(c_int), parameter :: FDTUNE_DEFINE_MAX = 64
    integer(c_int), parameter :: FDTUNE_SOURCES_MAX = 4
    integer(c_int), parameter :: FDTUNE_HASH_LEN = 33   ! 32 hex digits and a NUL
    integer(c_int), parameter :: FDTUNE_PITCH_AUTO = -1 ! fdtune_problem's pitch: tuner picks

    ! A problem to ask about; zero fields take the defaults (double, radius 1, hot, device 0,
    ! dense fields). The layout (fdtune.h): point (i, j, k), 0-based, of every field is at
    ! base + offset + i + pitch * (j + ny * k) points, base 256-byte aligned.
    type, bind(C) :: fdtune_problem
        integer(c_int) :: nx = 0, ny = 0, nz = 0
        integer(c_int) :: radius = 0          ! 1..4; 0 means 1
        integer(c_int) :: precision = FDTUNE_DOUBLE
        integer(c_int) :: cache = FDTUNE_HOT
        integer(c_int) :: device = 0          ! the daemon's device index
        integer(c_int) :: tune_if_missing = 0
        integer(c_int) :: pitch = 0           ! 0 dense, nx..nx+4096, or FDTUNE_PITCH_AUTO
        integer(c_int) :: offset = 0          ! points from the aligned base to (0, 0, 0)
    end type fdtune_problem

    ! The layout an answer is for, and a kernel's fields follow (fdtune.h).
    type, bind(C) :: fdtune_layout
        integer(c_int) :: pitch          ! the row pitch in points (nx: dense)
        integer(c_int) :: offset         ! points from the aligned base to point (0, 0, 0)
        real(c_double) :: dense_gbps     ! pitch auto: the dense layout's figure; else 0
        real(c_double) :: gain           ! pitch auto: gbps / dense_gbps; else 0
    end type fdtune_layout

    ! fdtune_answer's anonymous struct `from`: the tuned shape the answer comes from.
    type, bind(C) :: fdtune_answer_from
        integer(c_int) :: nx, ny, nz
        character(kind=c_char) :: device(FDTUNE_NAME_MAX)
        character(kind=c_char) :: driver(FDTUNE_NAME_MAX)
        character(kind=c_char) :: fingerprint(FDTUNE_NAME_MAX)
    end type fdtune_answer_from

    ! fdtune_answer's anonymous struct `persist`: the kernel of cache mode persist.
    type, bind(C) :: fdtune_answer_persist
        integer(c_int) :: present
        character(kind=c_char) :: sources(FDTUNE_NAME_MAX, FDTUNE_SOURCES_MAX)
        integer(c_int) :: nsources
        character(kind=c_char) :: source_hash(FDTUNE_HASH_LEN)
        character(kind=c_char) :: entry(FDTUNE_NAME_MAX)
        integer(c_int) :: block(3)
        integer(c_int) :: grid(3)
    end type fdtune_answer_persist

    ! The best known configuration for a problem (docs/protocol.md, "query").
    type, bind(C) :: fdtune_answer
        character(kind=c_char) :: match(16)        ! exact, nearest or default
        character(kind=c_char) :: device_match(16) ! fingerprint, model, arch or none
        type(fdtune_answer_from) :: from
        real(c_double) :: distance
        character(kind=c_char) :: variant(FDTUNE_NAME_MAX)
        character(kind=c_char) :: family(32)
        character(kind=c_char) :: sources(FDTUNE_NAME_MAX, FDTUNE_SOURCES_MAX)
        integer(c_int) :: nsources
        character(kind=c_char) :: source(FDTUNE_NAME_MAX)
        character(kind=c_char) :: source_hash(FDTUNE_HASH_LEN)
        character(kind=c_char) :: entry(FDTUNE_NAME_MAX)
        integer(c_int) :: block(3)
        integer(c_int) :: grid(3)
        character(kind=c_char) :: defines(FDTUNE_DEFINE_MAX, FDTUNE_DEFINES_MAX)
        integer(c_int) :: ndefines
        real(c_double) :: gbps
        real(c_double) :: copy_gbps
        real(c_double) :: kernel1_gbps
        integer(c_int) :: kernels_current
        type(fdtune_answer_persist) :: persist
        integer(c_long_long) :: job
        type(fdtune_layout) :: layout
    end type fdtune_answer

    ! Options of fdtune_kernel_open/load and fdtune_function_compile; all zero: defaults.
    type, bind(C) :: fdtune_kernel_options
        type(c_ptr) :: socket = c_null_ptr    ! NULL: fdtune_default_socket()
        integer(c_int) :: timeout_ms = 0      ! 0 or less: 2000
        type(c_ptr) :: cache_dir = c_null_ptr ! NULL: $FDTUNE_CACHE_DIR, ...; "": none
        integer(c_int) :: kernel1 = 0         ! 1: ask no daemon, load kernel 1
    end type fdtune_kernel_options

    ! What a kernel is and where it came from (fdtune_kernel_get_info).
    type, bind(C) :: fdtune_kernel_info
        integer(c_int) :: tuned                   ! 1: fdtuned's answer; 0: kernel 1
        character(kind=c_char) :: reason(512)     ! why the fallback ("" when tuned)
        character(kind=c_char) :: variant(FDTUNE_NAME_MAX)
        character(kind=c_char) :: match(16)
        integer(c_int) :: grid(3), block(3)
        real(c_double) :: stored_gbps
        real(c_double) :: copy_gbps
        integer(c_int) :: persist
        real(c_double) :: module_ms
        integer(c_int) :: cache_hits, compiles
        character(kind=c_char) :: note(512)       ! the disk cache unused, another device
        type(fdtune_layout) :: layout             ! the fields' layout launches assume
    end type fdtune_kernel_info

    interface
        ! ---- fdtune.h: the daemon ----

        subroutine fdtune_default_socket(out, len) bind(C, name="fdtune_default_socket")
            import :: c_char, c_size_t
            character(kind=c_char), intent(out) :: out(*)
            integer(c_size_t), value :: len
        end subroutine fdtune_default_socket

        ! socket_path: c_null_ptr for the default socket. Returns c_null_ptr on failure.
        function fdtune_connect(socket_path, timeout_ms, err, errlen) &
                bind(C, name="fdtune_connect")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: socket_path
            integer(c_int), value :: timeout_ms
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            type(c_ptr) :: fdtune_connect
        end function fdtune_connect

        subroutine fdtune_set_timeout(c, timeout_ms) bind(C, name="fdtune_set_timeout")
            import :: c_ptr, c_int
            type(c_ptr), value :: c
            integer(c_int), value :: timeout_ms
        end subroutine fdtune_set_timeout

        function fdtune_socket_path(c) bind(C, name="fdtune_socket_path")
            import :: c_ptr
            type(c_ptr), value :: c
            type(c_ptr) :: fdtune_socket_path
        end function fdtune_socket_path

        subroutine fdtune_close(c) bind(C, name="fdtune_close")
            import :: c_ptr
            type(c_ptr), value :: c
        end subroutine fdtune_close

        ! answer_line: a C string to release with fdtune_c_free.
        function fdtune_request(c, json_line, answer_line, err, errlen) &
                bind(C, name="fdtune_request")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: c
            character(kind=c_char), intent(in) :: json_line(*)
            type(c_ptr), intent(out) :: answer_line
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_request
        end function fdtune_request

        function fdtune_query(c, p, a, err, errlen) bind(C, name="fdtune_query")
            import :: c_ptr, c_int, c_char, c_size_t, fdtune_problem, fdtune_answer
            type(c_ptr), value :: c
            type(fdtune_problem), intent(in) :: p
            type(fdtune_answer), intent(out) :: a
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_query
        end function fdtune_query

        ! The same for a stencil of the solver's own: spec is its JSON text
        ! (docs/stencils.md), NUL-terminated; it names the radius (p%radius is not sent).
        function fdtune_query_spec(c, p, spec, a, err, errlen) bind(C, name="fdtune_query_spec")
            import :: c_ptr, c_int, c_char, c_size_t, fdtune_problem, fdtune_answer
            type(c_ptr), value :: c
            type(fdtune_problem), intent(in) :: p
            character(kind=c_char), intent(in) :: spec(*)
            type(fdtune_answer), intent(out) :: a
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_query_spec
        end function fdtune_query_spec

        function fdtune_answer_parse(answer_line, a, err, errlen) &
                bind(C, name="fdtune_answer_parse")
            import :: c_int, c_char, c_size_t, fdtune_answer
            character(kind=c_char), intent(in) :: answer_line(*)
            type(fdtune_answer), intent(out) :: a
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_answer_parse
        end function fdtune_answer_parse

        ! ---- fdtune_kernel.h: devices ----

        ! backend: 'hip', 'cuda', 'cpu' or 'auto' (C's NULL), NUL-terminated. device < 0:
        ! the calling thread's. stream: hipStream_t / CUstream, c_null_ptr for the default.
        function fdtune_device_open(backend, device, stream, out, err, errlen) &
                bind(C, name="fdtune_device_open")
            import :: c_ptr, c_int, c_char, c_size_t
            character(kind=c_char), intent(in) :: backend(*)
            integer(c_int), value :: device
            type(c_ptr), value :: stream
            type(c_ptr), intent(out) :: out
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_device_open
        end function fdtune_device_open

        subroutine fdtune_device_close(d) bind(C, name="fdtune_device_close")
            import :: c_ptr
            type(c_ptr), value :: d
        end subroutine fdtune_device_close

        ! The three return C strings owned by the device handle.
        function fdtune_device_backend(d) bind(C, name="fdtune_device_backend")
            import :: c_ptr
            type(c_ptr), value :: d
            type(c_ptr) :: fdtune_device_backend
        end function fdtune_device_backend

        function fdtune_device_name(d) bind(C, name="fdtune_device_name")
            import :: c_ptr
            type(c_ptr), value :: d
            type(c_ptr) :: fdtune_device_name
        end function fdtune_device_name

        function fdtune_device_arch(d) bind(C, name="fdtune_device_arch")
            import :: c_ptr
            type(c_ptr), value :: d
            type(c_ptr) :: fdtune_device_arch
        end function fdtune_device_arch

        ! ---- the Laplacian fdtuned chose ----

        ! o: fdtune_kernel_options() for C's NULL.
        function fdtune_kernel_open(d, p, o, out, err, errlen) &
                bind(C, name="fdtune_kernel_open")
            import :: c_ptr, c_int, c_char, c_size_t, fdtune_problem, fdtune_kernel_options
            type(c_ptr), value :: d
            type(fdtune_problem), intent(in) :: p
            type(fdtune_kernel_options), intent(in) :: o
            type(c_ptr), intent(out) :: out
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_kernel_open
        end function fdtune_kernel_open

        ! A stencil of the solver's own: spec is its JSON text, NUL-terminated; the kernel
        ! is generated from it, launched with fdtune_kernel_launch_fields.
        function fdtune_kernel_open_spec(d, p, spec, o, out, err, errlen) &
                bind(C, name="fdtune_kernel_open_spec")
            import :: c_ptr, c_int, c_char, c_size_t, fdtune_problem, fdtune_kernel_options
            type(c_ptr), value :: d
            type(fdtune_problem), intent(in) :: p
            character(kind=c_char), intent(in) :: spec(*)
            type(fdtune_kernel_options), intent(in) :: o
            type(c_ptr), intent(out) :: out
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_kernel_open_spec
        end function fdtune_kernel_open_spec

        ! c: a connection (fdtune_connect) or c_null_ptr.
        function fdtune_kernel_load(d, c, p, a, o, out, err, errlen) &
                bind(C, name="fdtune_kernel_load")
            import :: c_ptr, c_int, c_char, c_size_t, fdtune_problem, fdtune_answer, &
                      fdtune_kernel_options
            type(c_ptr), value :: d
            type(c_ptr), value :: c
            type(fdtune_problem), intent(in) :: p
            type(fdtune_answer), intent(in) :: a
            type(fdtune_kernel_options), intent(in) :: o
            type(c_ptr), intent(out) :: out
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_kernel_load
        end function fdtune_kernel_load

        ! f = Laplacian(u), f and u device buffers; cx = 1/hx**2 and so on.
        function fdtune_kernel_launch(k, f, u, cx, cy, cz, err, errlen) &
                bind(C, name="fdtune_kernel_launch")
            import :: c_ptr, c_int, c_double, c_char, c_size_t
            type(c_ptr), value :: k
            type(c_ptr), value :: f
            type(c_ptr), value :: u
            real(c_double), value :: cx, cy, cz
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_kernel_launch
        end function fdtune_kernel_launch

        ! Any kernel's stencil: outputs (the spec's, in its order) from inputs (its inputs,
        ! then its coefficient fields), device buffers, with constants (its constants'
        ! values in its order). The Laplacian's: [f], [u], [cx, cy, cz].
        function fdtune_kernel_launch_fields(k, outputs, inputs, constants, err, errlen) &
                bind(C, name="fdtune_kernel_launch_fields")
            import :: c_ptr, c_int, c_double, c_char, c_size_t
            type(c_ptr), value :: k
            type(c_ptr), intent(in) :: outputs(*)
            type(c_ptr), intent(in) :: inputs(*)
            real(c_double), intent(in) :: constants(*)
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_kernel_launch_fields
        end function fdtune_kernel_launch_fields

        ! Bytes one launch of k moves as fdtuned counts them (docs/stencils.md): divided by
        ! its time, the effective bandwidth fdtuned reports for the stencil.
        function fdtune_kernel_bytes(k) bind(C, name="fdtune_kernel_bytes")
            import :: c_ptr, c_double
            type(c_ptr), value :: k
            real(c_double) :: fdtune_kernel_bytes
        end function fdtune_kernel_bytes

        function fdtune_kernel_persist(k, f, release, err, errlen) &
                bind(C, name="fdtune_kernel_persist")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: k
            type(c_ptr), value :: f
            integer(c_int), value :: release
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_kernel_persist
        end function fdtune_kernel_persist

        ! A field in k's layout (info%layout) on k's device; field is point (0, 0, 0), the
        ! pitch * ny * nz points from it the field's. Freed with fdtune_field_free.
        function fdtune_field_alloc(k, field, err, errlen) bind(C, name="fdtune_field_alloc")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: k
            type(c_ptr), intent(out) :: field
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_field_alloc
        end function fdtune_field_alloc

        subroutine fdtune_field_free(k, field) bind(C, name="fdtune_field_free")
            import :: c_ptr
            type(c_ptr), value :: k
            type(c_ptr), value :: field
        end subroutine fdtune_field_free

        ! FDTUNE_OK, or FDTUNE_ERR_LAYOUT when a field of the solver's own is not aligned as
        ! k's layout (off its sector: right results, slower; off 16 bytes where the layout
        ! puts it on them: launches refused); err says how far off.
        function fdtune_kernel_check_field(k, field, err, errlen) &
                bind(C, name="fdtune_kernel_check_field")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: k
            type(c_ptr), value :: field
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_kernel_check_field
        end function fdtune_kernel_check_field

        ! A pointer to the kernel's fdtune_kernel_info, valid until fdtune_kernel_close:
        ! call c_f_pointer(fdtune_kernel_get_info(k), info) with a type(fdtune_kernel_info),
        ! pointer :: info.
        function fdtune_kernel_get_info(k) bind(C, name="fdtune_kernel_get_info")
            import :: c_ptr
            type(c_ptr), value :: k
            type(c_ptr) :: fdtune_kernel_get_info
        end function fdtune_kernel_get_info

        subroutine fdtune_kernel_close(k) bind(C, name="fdtune_kernel_close")
            import :: c_ptr
            type(c_ptr), value :: k
        end subroutine fdtune_kernel_close

        ! Bytes one Laplacian of p moves (reads of u, writes of f): divided by its time,
        ! the effective bandwidth fdtuned reports.
        function fdtune_laplacian_bytes(p) bind(C, name="fdtune_laplacian_bytes")
            import :: c_double, fdtune_problem
            type(fdtune_problem), intent(in) :: p
            real(c_double) :: fdtune_laplacian_bytes
        end function fdtune_laplacian_bytes

        ! ---- the solver's own kernels, and memory ----

        ! defines: c_loc of NUL-terminated "NAME=VALUE" target strings, ndefines of them.
        function fdtune_function_compile(d, source, entry, defines, ndefines, o, out, err, &
                                         errlen) bind(C, name="fdtune_function_compile")
            import :: c_ptr, c_int, c_char, c_size_t, fdtune_kernel_options
            type(c_ptr), value :: d
            character(kind=c_char), intent(in) :: source(*)
            character(kind=c_char), intent(in) :: entry(*)
            type(c_ptr), intent(in) :: defines(*)
            integer(c_int), value :: ndefines
            type(fdtune_kernel_options), intent(in) :: o
            type(c_ptr), intent(out) :: out
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_function_compile
        end function fdtune_function_compile

        ! args: c_loc of each argument, in the order of the kernel's parameters (a device
        ! buffer's argument is c_loc of its type(c_ptr) variable).
        function fdtune_function_launch(fn, grid, block, args, err, errlen) &
                bind(C, name="fdtune_function_launch")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: fn
            integer(c_int), intent(in) :: grid(3)
            integer(c_int), intent(in) :: block(3)
            type(c_ptr), intent(in) :: args(*)
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_function_launch
        end function fdtune_function_launch

        subroutine fdtune_function_free(fn) bind(C, name="fdtune_function_free")
            import :: c_ptr
            type(c_ptr), value :: fn
        end subroutine fdtune_function_free

        function fdtune_alloc(d, bytes, ptr, err, errlen) bind(C, name="fdtune_alloc")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: d
            integer(c_size_t), value :: bytes
            type(c_ptr), intent(out) :: ptr
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_alloc
        end function fdtune_alloc

        subroutine fdtune_free(d, ptr) bind(C, name="fdtune_free")
            import :: c_ptr
            type(c_ptr), value :: d
            type(c_ptr), value :: ptr
        end subroutine fdtune_free

        ! src: c_loc of a contiguous target host array.
        function fdtune_upload(d, dst, src, bytes, err, errlen) bind(C, name="fdtune_upload")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: d
            type(c_ptr), value :: dst
            type(c_ptr), value :: src
            integer(c_size_t), value :: bytes
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_upload
        end function fdtune_upload

        ! dst: c_loc of a contiguous target host array.
        function fdtune_download(d, dst, src, bytes, err, errlen) &
                bind(C, name="fdtune_download")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: d
            type(c_ptr), value :: dst
            type(c_ptr), value :: src
            integer(c_size_t), value :: bytes
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_download
        end function fdtune_download

        function fdtune_synchronize(d, err, errlen) bind(C, name="fdtune_synchronize")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: d
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_synchronize
        end function fdtune_synchronize

        function fdtune_timer_start(d, err, errlen) bind(C, name="fdtune_timer_start")
            import :: c_ptr, c_int, c_char, c_size_t
            type(c_ptr), value :: d
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_timer_start
        end function fdtune_timer_start

        function fdtune_timer_stop(d, ms, err, errlen) bind(C, name="fdtune_timer_stop")
            import :: c_ptr, c_int, c_double, c_char, c_size_t
            type(c_ptr), value :: d
            real(c_double), intent(out) :: ms
            character(kind=c_char), intent(out) :: err(*)
            integer(c_size_t), value :: errlen
            integer(c_int) :: fdtune_timer_stop
        end function fdtune_timer_stop

        ! ---- libc, for the strings the library hands out ----

        function fdtune_c_strlen(s) bind(C, name="strlen")
            import :: c_ptr, c_size_t
            type(c_ptr), value :: s
            integer(c_size_t) :: fdtune_c_strlen
        end function fdtune_c_strlen

        subroutine fdtune_c_free(p) bind(C, name="free")
            import :: c_ptr
            type(c_ptr), value :: p
        end subroutine fdtune_c_free
    end interface
end module fdtune
