! heat.f90 - examples/heat.c in Fortran 2008: the 3D heat equation u_t = Laplacian(u) on
! the unit cube, explicit Euler in time, the Laplacian fdtuned tuned for the grid, and the
! solver's own update kernel, on the first GPU found or else the cpu.
!
!     gfortran -std=f2008 -J DIR -c cli/fortran/fdtune.f90          (once: fdtune.mod)
!     gfortran -std=f2008 -I DIR heat.f90 -lfdtune -o heat_f
!     heat_f NX NY NZ [--precision float|double] [--steps N] [--kernel1]
!
! The grid has n points per axis, i = 0 .. n-1 at x = i / (n-1); u = 0 on the boundary and
! u0 = sin(pi x) sin(pi y) sin(pi z), so the exact solution is exp(-3 pi^2 t) u0. That u0 is
! an eigenvector of the discrete Laplacian too, so the computed u is the exact one up to the
! scheme's truncation error, which the program bounds (error_bound below) and checks: a
! kernel that gets one point wrong fails the run. --kernel1 runs the seeds' kernel 1
! instead of the tuned one, to compare. The last line is machine-readable, as heat.c's:
!
!     heat shape=NXxNYxNZ precision=P steps=N source=tuned|fallback variant=V
!          laplacian_gbps=X step_ms=X error=X error_bound=X            (one line)
!
! Exit: 0 when error <= error_bound, 1 when not or when the library fails, 2 bad usage.
! The host array is u(0:nx-1, 0:ny-1, 0:nz-1): Fortran's column-major order is the
! kernels' i + nx (j + ny k), so it goes to and from the device as it is.
program heat
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: output_unit, error_unit, int64
    use, intrinsic :: ieee_arithmetic, only: ieee_is_nan, ieee_is_finite, ieee_value, &
                                             ieee_quiet_nan
    use fdtune
    implicit none

    real(c_double), parameter :: pi = 3.14159265358979323846_c_double
    character(kind=c_char), parameter :: nl = c_new_line
    ! The solver's own kernel: u += dt f on the interior. REAL is a -D define.
    character(kind=c_char, len=*), parameter :: update_source = &
        'extern "C" __global__ void heat_update(REAL *u, const REAL *f, int nx, int ny, ' // &
        'int nz,' // nl // &
        '                                         REAL dt)' // nl // &
        '{' // nl // &
        '    const int i = blockIdx.x * blockDim.x + threadIdx.x;' // nl // &
        '    const int j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;' // nl // &
        '    if (i < 1 || i >= nx - 1 || j < 1 || j >= ny - 1 || k < 1 || k >= nz - 1)' // &
        nl // &
        '        return;' // nl // &
        '    const long long p = i + (long long)nx * (j + (long long)ny * k);' // nl // &
        '    u[p] += dt * f[p];' // nl // &
        '}' // nl // c_null_char
    integer(c_size_t), parameter :: errlen = 2048

    interface
        ! libc's exit, for the exit codes: Fortran 2008's STOP 1 also writes "STOP 1" to
        ! stderr (and gfortran a note on the IEEE flags raised), ahead of our own message.
        subroutine c_exit(status) bind(C, name="exit")
            import :: c_int
            integer(c_int), value :: status
        end subroutine c_exit
    end interface

    ! The run's settings (parse_args), scheme (set_scheme) and results.
    type(fdtune_problem) :: prob
    type(fdtune_kernel_options) :: opts
    integer :: steps = 100
    real(c_double) :: h(3), dt, laplacian_ms, step_ms, error, bound
    integer(c_size_t) :: points, real_size, bytes

    ! What the library made, kept here so that teardown can undo whatever exists.
    type(c_ptr) :: dev = c_null_ptr, laplacian = c_null_ptr, update = c_null_ptr
    type(c_ptr), target :: u = c_null_ptr, f = c_null_ptr    ! device buffers
    character(kind=c_char, len=errlen) :: err = ''

    ! u on the host, in the run's precision: one of the two is allocated. float runs keep
    ! float on the host too, so that what is uploaded is exactly what the kernels see.
    real(c_double), allocatable, target :: ud(:, :, :)
    real(c_float), allocatable, target :: uf(:, :, :)
    ! sin(pi x) on each axis: u0 and the exact solution are their products.
    real(c_double), allocatable :: sx(:), sy(:), sz(:)

    call parse_args()
    call set_scheme()
    call check(fdtune_device_open('auto'//c_null_char, -1, c_null_ptr, dev, err, errlen))
    call setup_fields()
    call setup_kernels()
    call print_kernel()
    call time_steps()
    call report()
    call teardown()
    if (.not. (error <= bound)) call quit(1)   ! not "error > bound": a NaN error fails too

contains

    ! ---- arguments ----

    subroutine parse_args()
        character(len=:), allocatable :: arg, v
        integer :: i
        if (command_argument_count() < 3) call usage('NX NY NZ are required')
        prob%radius = 1
        prob%precision = FDTUNE_DOUBLE
        ! NZ is the update's grid z, which GPUs bound to 65535.
        if (.not. (whole(argument(1), 3, 65536, prob%nx) .and. &
                   whole(argument(2), 3, 65536, prob%ny) .and. &
                   whole(argument(3), 3, 65535, prob%nz))) &
            call usage('NX NY must be whole numbers from 3 to 65536, NZ from 3 to 65535')
        i = 4
        do while (i <= command_argument_count())
            arg = argument(i)
            if (arg == '--kernel1') then
                opts%kernel1 = 1
            else if (arg == '--steps' .and. i < command_argument_count()) then
                i = i + 1
                if (.not. whole(argument(i), 1, 1000000, steps)) &
                    call usage('--steps must be a whole number from 1 to 1000000')
            else if (arg == '--precision' .and. i < command_argument_count()) then
                i = i + 1
                v = argument(i)
                if (v /= 'float' .and. v /= 'double') &
                    call usage('--precision must be float or double')
                prob%precision = merge(FDTUNE_FLOAT, FDTUNE_DOUBLE, v == 'float')
            else
                call usage("unknown or incomplete option '" // arg(1:min(len(arg), 64)) // "'")
            end if
            i = i + 1
        end do
    end subroutine parse_args

    function argument(i) result(s)
        integer, intent(in) :: i
        character(len=:), allocatable :: s
        integer :: n
        call get_command_argument(i, length=n)
        allocate(character(len=n) :: s)
        if (n > 0) call get_command_argument(i, s)
    end function argument

    ! text as a whole number from lo to hi (digits only: at most 9 of them fit any int).
    logical function whole(text, lo, hi, out)
        character(len=*), intent(in) :: text
        integer, intent(in) :: lo, hi
        integer, intent(inout) :: out
        integer :: v, ios
        whole = .false.
        if (len(text) < 1 .or. len(text) > 9 .or. verify(text, '0123456789') /= 0) return
        read(text, *, iostat=ios) v
        if (ios /= 0 .or. v < lo .or. v > hi) return
        out = v
        whole = .true.
    end function whole

    subroutine usage(why)
        character(len=*), intent(in) :: why
        write(error_unit, '(a)') 'heat_f: ' // why
        write(error_unit, '(a)') 'usage: heat_f NX NY NZ [--precision float|double] ' // &
            '[--steps N] [--kernel1]'
        call quit(2)
    end subroutine usage

    ! ---- the scheme ----

    ! Grid spacing, and the time step: explicit Euler is stable, and keeps the max norm from
    ! growing, for dt * sum(1/h^2) <= 1/2; 0.4 leaves a margin.
    subroutine set_scheme()
        integer :: n(3)
        n = [prob%nx, prob%ny, prob%nz]
        h = 1.0_c_double / (n - 1)
        dt = 0.4_c_double / sum(1 / (h * h))
        ! Counts in size_t: 65536^3 points overflow a default integer.
        points = int(prob%nx, c_size_t) * int(prob%ny, c_size_t) * int(prob%nz, c_size_t)
        real_size = merge(c_sizeof(1.0_c_float), c_sizeof(1.0_c_double), &
                          prob%precision == FDTUNE_FLOAT)
        bytes = points * real_size
        call axis(prob%nx, h(1), sx)
        call axis(prob%ny, h(2), sy)
        call axis(prob%nz, h(3), sz)
    end subroutine set_scheme

    ! sin(pi x_i), i = 0 .. n-1, on one axis, with the boundary exactly 0 (sin(pi) in
    ! floating point is 1.2e-16, a boundary value the problem does not have).
    subroutine axis(n, hn, s)
        integer, intent(in) :: n
        real(c_double), intent(in) :: hn
        real(c_double), allocatable, intent(out) :: s(:)
        integer :: i
        allocate(s(0:n - 1))
        do i = 1, n - 2
            s(i) = sin(pi * i * hn)
        end do
        s(0) = 0
        s(n - 1) = 0
    end subroutine axis

    ! ---- device buffers and kernels ----

    ! Device buffers u (= u0) and f (= 0: its boundary is never written, but it is read by
    ! nobody either; zeros keep a memory checker quiet). One host array serves both uploads.
    subroutine setup_fields()
        integer :: j, k, stat
        character(len=24) :: text
        if (prob%precision == FDTUNE_FLOAT) then
            allocate(uf(0:prob%nx - 1, 0:prob%ny - 1, 0:prob%nz - 1), stat=stat)
        else
            allocate(ud(0:prob%nx - 1, 0:prob%ny - 1, 0:prob%nz - 1), stat=stat)
        end if
        if (stat /= 0) then
            write(text, '(i0)') bytes
            call fail('out of host memory for ' // trim(text) // ' bytes')
        end if
        call check(fdtune_alloc(dev, bytes, u, err, errlen))
        call check(fdtune_alloc(dev, bytes, f, err, errlen))
        do k = 0, prob%nz - 1
            do j = 0, prob%ny - 1
                if (allocated(uf)) then
                    uf(:, j, k) = real(sx * sy(j) * sz(k), c_float)
                else
                    ud(:, j, k) = sx * sy(j) * sz(k)
                end if
            end do
        end do
        call check(fdtune_upload(dev, u, host(), bytes, err, errlen))
        if (allocated(uf)) uf = 0
        if (allocated(ud)) ud = 0
        call check(fdtune_upload(dev, f, host(), bytes, err, errlen))
    end subroutine setup_fields

    ! The host array, whichever precision it has.
    type(c_ptr) function host()
        if (allocated(uf)) then
            host = c_loc(uf)
        else
            host = c_loc(ud)
        end if
    end function host

    subroutine setup_kernels()
        character(kind=c_char, len=12), target :: define
        type(c_ptr) :: defines(1)
        call check(fdtune_kernel_open(dev, prob, opts, laplacian, err, errlen))
        define = merge('REAL=float ', 'REAL=double', prob%precision == FDTUNE_FLOAT)
        define = trim(define) // c_null_char
        defines(1) = c_loc(define)
        call check(fdtune_function_compile(dev, update_source, 'heat_update'//c_null_char, &
                                           defines, 1, opts, update, err, errlen))
        ! Cache mode persist only (a no-op otherwise): f's row edges held in L2.
        call check(fdtune_kernel_persist(laplacian, f, 0, err, errlen))
    end subroutine setup_kernels

    subroutine print_kernel()
        type(fdtune_kernel_info), pointer :: k
        character(len=:), allocatable :: line
        call c_f_pointer(fdtune_kernel_get_info(laplacian), k)
        print '(a)', 'device:    ' // c_string(fdtune_device_backend(dev)) // ' ' // &
            c_string(fdtune_device_name(dev)) // ' (' // c_string(fdtune_device_arch(dev)) // &
            ')'
        line = 'laplacian: ' // chars(k%variant) // ', ' // source_of(k)
        if (k%tuned /= 0) then
            line = line // ' (match ' // chars(k%match) // ', fdtuned measured ' // &
                fixed(k%stored_gbps, 1) // ' GB/s, copy ' // fixed(k%copy_gbps, 1) // ' GB/s'
            if (k%persist /= 0) line = line // ', persist'
            line = line // ')'
        else
            line = line // ' (' // chars(k%reason) // ')'
        end if
        print '(a)', line
        print '(a)', 'modules:   ' // fixed(k%module_ms, 1) // ' ms, ' // &
            itoa(k%cache_hits) // ' from the disk cache, ' // itoa(k%compiles) // ' compiled'
        if (len(chars(k%note)) > 0) print '(a)', 'note:      ' // chars(k%note)
    end subroutine print_kernel

    ! ---- the time steps ----

    ! The time steps: the first half measures the Laplacian, the second the step; a single
    ! step does both (its step_ms then includes the timer's wait). heat.c says why so.
    subroutine time_steps()
        integer(int64) :: start, finish, rate
        call system_clock(start, rate)
        if (steps == 1) then
            call timed_steps(1)
        else
            call timed_steps(steps / 2)
            call check(fdtune_synchronize(dev, err, errlen))
            call system_clock(start, rate)
            call free_steps(steps - steps / 2)
        end if
        call check(fdtune_synchronize(dev, err, errlen))
        call system_clock(finish)
        step_ms = real(finish - start, c_double) * 1e3_c_double / real(rate, c_double) / &
                  max(steps - steps / 2, 1)
    end subroutine time_steps

    ! n steps with each Laplacian timed by device events, as fdtuned times it; the first,
    ! from an idle device and a cold cache, is left out of the mean when there are more.
    subroutine timed_steps(n)
        integer, intent(in) :: n
        real(c_double) :: ms
        integer :: s
        laplacian_ms = 0
        do s = 1, n
            call check(fdtune_timer_start(dev, err, errlen))
            call launch_laplacian()
            call check(fdtune_timer_stop(dev, ms, err, errlen))
            if (s > 1 .or. n == 1) laplacian_ms = laplacian_ms + ms
            call launch_update()
        end do
        laplacian_ms = laplacian_ms / max(n - 1, 1)
    end subroutine timed_steps

    ! n steps with nothing waited on between them: what a step costs the solver.
    subroutine free_steps(n)
        integer, intent(in) :: n
        integer :: s
        do s = 1, n
            call launch_laplacian()
            call launch_update()
        end do
    end subroutine free_steps

    subroutine launch_laplacian()
        real(c_double) :: c(3)
        c = 1 / (h * h)
        call check(fdtune_kernel_launch(laplacian, f, u, c(1), c(2), c(3), err, errlen))
    end subroutine launch_laplacian

    ! u += dt f; its arguments go by address, as cuLaunchKernel takes them. dt is passed in
    ! the kernel's REAL, so a float run gets a float.
    subroutine launch_update()
        integer(c_int), target :: nx, ny, nz
        real(c_double), target :: dt_double
        real(c_float), target :: dt_float
        type(c_ptr) :: args(6)
        nx = prob%nx
        ny = prob%ny
        nz = prob%nz
        dt_double = dt
        dt_float = real(dt, c_float)
        args = [c_loc(u), c_loc(f), c_loc(nx), c_loc(ny), c_loc(nz), c_loc(dt_double)]
        if (prob%precision == FDTUNE_FLOAT) args(6) = c_loc(dt_float)
        call check(fdtune_function_launch(update, [(nx + 127) / 128, (ny + 1) / 2, nz], &
                                          [128, 2, 1], args, err, errlen))
    end subroutine launch_update

    ! ---- the result ----

    ! The max-norm distance from the exact solution exp(-3 pi^2 t) u0, and the bound on it.
    subroutine report()
        type(fdtune_kernel_info), pointer :: kernel
        real(c_double) :: decay, gbps
        real(c_double), allocatable :: exact(:), diff(:)   ! one row of the grid
        logical :: nan
        integer :: j, k
        call check(fdtune_download(dev, host(), u, bytes, err, errlen))
        allocate(exact(0:prob%nx - 1), diff(0:prob%nx - 1))
        decay = exp(-3 * pi * pi * steps * dt)
        error = 0
        nan = .false.
        do k = 0, prob%nz - 1
            do j = 0, prob%ny - 1
                exact = decay * (sx * sy(j) * sz(k))
                if (allocated(uf)) then
                    diff = abs(real(uf(:, j, k), c_double) - exact)
                else
                    diff = abs(ud(:, j, k) - exact)
                end if
                error = max(error, maxval(diff))
                nan = nan .or. any(ieee_is_nan(diff))   ! which maxval may pass over
            end do
        end do
        if (nan) error = ieee_value(error, ieee_quiet_nan)
        bound = error_bound()
        gbps = fdtune_laplacian_bytes(prob) / (laplacian_ms * 1e-3_c_double) / 1e9_c_double
        call c_f_pointer(fdtune_kernel_get_info(laplacian), kernel)
        print '(a)', 'heat shape=' // itoa(prob%nx) // 'x' // itoa(prob%ny) // 'x' // &
            itoa(prob%nz) // ' precision=' // precision_name() // ' steps=' // itoa(steps) // &
            ' source=' // source_of(kernel) // ' variant=' // chars(kernel%variant) // &
            ' laplacian_gbps=' // fixed(gbps, 1) // ' step_ms=' // fixed(step_ms, 4) // &
            ' error=' // sci(error) // ' error_bound=' // sci(bound)
        if (.not. (error <= bound)) write(error_unit, '(a)') 'heat_f: the error ' // &
            sci(error) // " exceeds the scheme's bound " // sci(bound)
    end subroutine report

    ! What the scheme may be off by after the run, |u0| <= 1:
    !  - time: each step multiplies the mode by g = 1 - dt L instead of exp(-dt L), with L <=
    !    3 pi^2 its discrete eigenvalue: |g - exp(-dt L)| <= (dt L)^2 / 2, and steps of it add;
    !  - space: L differs from 3 pi^2 by at most pi^4 (hx^2 + hy^2 + hz^2) / 12, which over
    !    time t changes exp(-L t) by at most t times that;
    !  - rounding: each step adds a few ulps (f's sum of 7 terms times dt, then the update),
    !    which the max-norm-stable step does not grow: 16 ulps a step, 2 for u0.
    real(c_double) function error_bound()
        real(c_double) :: eps, t, l
        eps = merge(real(epsilon(1.0_c_float), c_double), epsilon(1.0_c_double), &
                    prob%precision == FDTUNE_FLOAT)
        t = steps * dt
        l = 3 * pi * pi * dt
        error_bound = steps * l * l / 2 + t * pi**4 * sum(h * h) / 12 + &
                      (16.0_c_double * steps + 2) * eps
    end function error_bound

    function precision_name() result(s)
        character(len=:), allocatable :: s
        s = trim(merge('float ', 'double', prob%precision == FDTUNE_FLOAT))
    end function precision_name

    function source_of(k) result(s)
        type(fdtune_kernel_info), intent(in) :: k
        character(len=:), allocatable :: s
        s = trim(merge('tuned   ', 'fallback', k%tuned /= 0))
    end function source_of

    ! ---- failure and cleanup ----

    ! Every library call goes through here: on failure, the library's text, then exit 1.
    subroutine check(status)
        integer(c_int), intent(in) :: status
        if (status /= FDTUNE_OK) call fail(err(1:max(index(err, c_null_char) - 1, 0)))
    end subroutine check

    subroutine fail(why)
        character(len=*), intent(in) :: why
        write(error_unit, '(a)') 'heat_f: ' // why
        call teardown()
        call quit(1)
    end subroutine fail

    subroutine quit(code)
        integer(c_int), intent(in) :: code
        flush(output_unit)
        flush(error_unit)
        call c_exit(code)
    end subroutine quit

    ! Undoes whatever exists, in reverse order; safe at any point of the run.
    subroutine teardown()
        integer(c_int) :: ignored
        if (c_associated(laplacian) .and. c_associated(f)) &
            ignored = fdtune_kernel_persist(laplacian, f, 1, err, errlen)
        if (c_associated(update)) call fdtune_function_free(update)
        if (c_associated(laplacian)) call fdtune_kernel_close(laplacian)
        if (c_associated(u)) call fdtune_free(dev, u)
        if (c_associated(f)) call fdtune_free(dev, f)
        if (c_associated(dev)) call fdtune_device_close(dev)
        update = c_null_ptr
        laplacian = c_null_ptr
        u = c_null_ptr
        f = c_null_ptr
        dev = c_null_ptr
        if (allocated(ud)) deallocate(ud)
        if (allocated(uf)) deallocate(uf)
        if (allocated(sx)) deallocate(sx, sy, sz)
    end subroutine teardown

    ! ---- text: C strings in, printf's formats out ----

    ! A NUL-terminated char array of a struct (fdtune_kernel_info's variant, reason, match).
    function chars(a) result(s)
        character(kind=c_char), intent(in) :: a(:)
        character(len=:), allocatable :: s
        integer :: n, i
        n = size(a)
        do i = 1, size(a)
            if (a(i) == c_null_char) then
                n = i - 1
                exit
            end if
        end do
        allocate(character(len=n) :: s)
        do i = 1, n
            s(i:i) = a(i)
        end do
    end function chars

    ! A const char * the library returned.
    function c_string(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        character(kind=c_char), pointer :: a(:)
        if (.not. c_associated(p)) then
            s = ''
            return
        end if
        call c_f_pointer(p, a, [fdtune_c_strlen(p)])
        s = chars(a)
    end function c_string

    function itoa(n) result(s)
        integer, intent(in) :: n
        character(len=:), allocatable :: s
        character(len=12) :: buf
        write(buf, '(i0)') n
        s = trim(buf)
    end function itoa

    ! printf's %.<digits>f: Fortran's F0.d leaves out the 0 before the point.
    function fixed(x, digits) result(s)
        real(c_double), intent(in) :: x
        integer, intent(in) :: digits
        character(len=:), allocatable :: s
        character(len=400) :: buf                ! room for 1e308 in full
        character(len=16) :: fmt
        if (.not. ieee_is_finite(x)) then
            s = nonfinite(x)
            return
        end if
        write(fmt, '(a, i0, a)') '(f0.', digits, ')'
        write(buf, fmt) x
        s = trim(adjustl(buf))
        if (s(1:1) == '.') s = '0' // s
        if (s(1:min(2, len(s))) == '-.') s = '-0' // s(2:)
    end function fixed

    ! printf's %.3e: 1.234e-05, a lower-case e and at least two exponent digits.
    function sci(x) result(s)
        real(c_double), intent(in) :: x
        character(len=:), allocatable :: s
        character(len=32) :: buf
        character(len=:), allocatable :: e
        integer :: at
        if (.not. ieee_is_finite(x)) then
            s = nonfinite(x)
            return
        end if
        write(buf, '(es16.3e3)') x
        buf = adjustl(buf)
        at = index(buf, 'E')
        e = trim(buf(at + 2:))                 ! three digits
        if (e(1:1) == '0') e = e(2:)
        s = buf(:at - 1) // 'e' // buf(at + 1:at + 1) // e
    end function sci

    function nonfinite(x) result(s)
        real(c_double), intent(in) :: x
        character(len=:), allocatable :: s
        if (ieee_is_nan(x)) then
            s = 'nan'
        else if (x > 0) then
            s = 'inf'
        else
            s = '-inf'
        end if
    end function nonfinite
end program heat
