! wave.f90 - examples/wave.c in Fortran 2008: the acoustic wave equation u_tt = v^2
! Laplacian(u) on the unit cube, 8th order in space, leapfrog in time, with the update
! written as a stencil spec (specs/acoustic8.json, docs/stencils.md) that fdtuned tunes and
! libfdtune compiles, plus the solver's own boundary kernel, on the first GPU found or else
! the cpu.
!
!     gfortran -std=f2008 -J DIR -c cli/fortran/fdtune.f90          (once: fdtune.mod)
!     gfortran -std=f2008 -cpp -I DIR wave.f90 -lfdtune -o wave_f
!     wave_f NX NY NZ [--spec FILE] [--precision float|double] [--steps N] [--kernel1]
!
! The spec's default is the one line below the preprocessor sets, as wave.c's: WAVE_SPEC
! where the build defines it (-DWAVE_SPEC='"/path/to/acoustic8.json"'; the Makefile names
! the checkout's copy, and adds -ffree-line-length-none so that a long path still fits the
! line), else specs/acoustic8.json; hence -cpp, which is all the preprocessor does here.
!
! The spec is
!     u_next = 2 u - u_prev + v2 (c2x D_xx u + c2y D_yy u + c2z D_zz u)
! with D_aa the central second difference of order 8 (weights w_r, r = 0..4), v2 = v^2 a
! field read per point (uniform here, so that the check below holds) and c2a = dt^2 / ha^2
! given at launch. The grid has n points per axis, x = i / (n-1), and u0 = sin(pi x)
! sin(pi y) sin(pi z). That mode is an eigenvector of every D_aa, with eigenvalue -l_a =
! w_0 + 2 sum_r w_r cos(pi r h_a), so leapfrog keeps it: with L = v^2 sum_a c2a l_a and
! cos(theta) = 1 - L / 2, u^n = cos(n theta) u0 exactly, if the 4 outermost layers (which
! the kernel never writes: they are the boundary) hold that too. The solver's boundary
! kernel sets them to cos(n theta) u0 each step, so the computed u differs from
! cos(N theta) u0 by rounding alone, which the program bounds and checks. The last line is
! machine-readable, as wave.c's:
!
!     wave shape=NXxNYxNZ precision=P steps=N source=tuned|fallback variant=V
!          stencil_gbps=X step_ms=X error=X error_bound=X                  (one line)
!
! where stencil_gbps is the spec's ideal bytes (fdtune_kernel_bytes) over the kernel's time.
! Exit: 0 when error <= error_bound, 1 when not or when the library fails, 2 bad usage.
! The host arrays are (0:nx-1, 0:ny-1, 0:nz-1): Fortran's column-major order is the
! kernels' i + nx (j + ny k), so they go to and from the device as they are.
program wave
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: output_unit, error_unit, int64, iostat_end
    use, intrinsic :: ieee_arithmetic, only: ieee_is_nan, ieee_is_finite, ieee_value, &
                                             ieee_positive_inf
    use fdtune
    implicit none

#ifndef WAVE_SPEC
#define WAVE_SPEC "specs/acoustic8.json"
#endif
    character(len=*), parameter :: default_spec = &
        WAVE_SPEC
    real(c_double), parameter :: pi = 3.14159265358979323846_c_double
    integer, parameter :: r = 4                  ! the spec's reach: the boundary is 4 deep
    real(c_double), parameter :: v2 = 1          ! v^2, uniform
    ! The 8th-order second difference's weights (the spec's generator computes the same).
    real(c_double), parameter :: w(0:r) = [-205.0_c_double / 72, 8.0_c_double / 5, &
                                           -1.0_c_double / 5, 8.0_c_double / 315, &
                                           -1.0_c_double / 560]
    integer, parameter :: max_spec = 65536       ! a spec's most bytes: the library's bound
    character(kind=c_char), parameter :: nl = c_new_line
    ! The solver's own kernel: u = c u0 on the r outermost layers. REAL is a -D define.
    character(kind=c_char, len=*), parameter :: boundary_source = &
        'extern "C" __global__ void wave_boundary(REAL *u, const REAL *u0, int nx, int ny,' &
        // nl // &
        '                                          int nz, REAL c)' // nl // &
        '{' // nl // &
        '    const int i = blockIdx.x * blockDim.x + threadIdx.x;' // nl // &
        '    const int j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;' // nl // &
        '    const int r = 4;' // nl // &
        '    if (i >= nx || j >= ny)' // nl // &
        '        return;' // nl // &
        '    if (i >= r && i < nx - r && j >= r && j < ny - r && k >= r && k < nz - r)' // nl // &
        '        return;' // nl // &
        '    const long long p = i + (long long)nx * (j + (long long)ny * k);' // nl // &
        '    u[p] = c * u0[p];' // nl // &
        '}' // nl // c_null_char
    integer(c_size_t), parameter :: errlen = 2048

    interface
        ! libc's exit, for the exit codes (heat.f90 says why not STOP).
        subroutine c_exit(status) bind(C, name="exit")
            import :: c_int
            integer(c_int), value :: status
        end subroutine c_exit
    end interface

    ! The run's settings (parse_args), scheme (set_scheme) and results.
    type(fdtune_problem) :: prob
    type(fdtune_kernel_options) :: opts
    integer :: steps = 100, step = 0             ! step: the steps made so far
    character(len=:), allocatable :: spec_path
    character(kind=c_char, len=:), allocatable :: spec   ! its text, NUL-terminated
    real(c_double) :: h(3), dt, theta, stencil_ms, step_ms, error, bound
    integer(c_size_t) :: points, real_size, bytes

    ! What the library made, kept here so that teardown can undo whatever exists.
    type(c_ptr) :: dev = c_null_ptr, stencil = c_null_ptr, boundary = c_null_ptr
    ! Device buffers; grids: u_prev, u, u_next, turned each step.
    type(c_ptr), target :: u0 = c_null_ptr, v2_field = c_null_ptr
    type(c_ptr), target :: grids(3) = c_null_ptr
    character(kind=c_char, len=errlen) :: err = ''

    ! A field on the host, in the run's precision: one of the two is allocated. float runs
    ! keep float on the host too, so that what is uploaded is exactly what the kernels see.
    real(c_double), allocatable, target :: fd(:, :, :)
    real(c_float), allocatable, target :: ff(:, :, :)
    ! sin(pi x) on each axis: u0 is their product.
    real(c_double), allocatable :: sx(:), sy(:), sz(:)

    call parse_args()
    call set_scheme()
    call read_spec()
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
        character(len=:), allocatable :: arg
        integer :: i
        if (command_argument_count() < 3) call usage('NX NY NZ are required')
        prob%precision = FDTUNE_DOUBLE
        spec_path = default_spec
        ! NZ is the boundary kernel's grid z, which GPUs bound to 65535.
        if (.not. (whole(argument(1), 2 * r + 1, 65536, prob%nx) .and. &
                   whole(argument(2), 2 * r + 1, 65536, prob%ny) .and. &
                   whole(argument(3), 2 * r + 1, 65535, prob%nz))) &
            call usage('NX NY must be whole numbers from 9 to 65536, NZ from 9 to 65535')
        i = 4
        do while (i <= command_argument_count())
            arg = argument(i)
            if (arg == '--kernel1') then
                opts%kernel1 = 1
            else if (arg == '--steps' .and. i < command_argument_count()) then
                i = i + 1
                if (.not. whole(argument(i), 1, 1000000, steps)) &
                    call usage('--steps must be a whole number from 1 to 1000000')
            else if (arg == '--spec' .and. i < command_argument_count()) then
                i = i + 1
                spec_path = argument(i)
            else if (arg == '--precision' .and. i < command_argument_count()) then
                i = i + 1
                arg = argument(i)
                if (arg /= 'float' .and. arg /= 'double') &
                    call usage('--precision must be float or double')
                prob%precision = merge(FDTUNE_FLOAT, FDTUNE_DOUBLE, arg == 'float')
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
        write(error_unit, '(a)') 'wave_f: ' // why
        write(error_unit, '(a)') 'usage: wave_f NX NY NZ [--spec FILE] ' // &
            '[--precision float|double] [--steps N] [--kernel1]'
        call teardown()
        call quit(2)
    end subroutine usage

    ! The spec's text from its file, NUL-terminated: at most max_spec bytes (a longer file
    ! reaches the library cut short, which it refuses, as wave.c's does). Byte by byte,
    ! because a stream's size is unknown for a pipe and a short read's count is not told.
    subroutine read_spec()
        character(kind=c_char, len=max_spec) :: text
        character(kind=c_char) :: byte
        integer :: unit, ios, n
        open(newunit=unit, file=spec_path, access='stream', form='unformatted', &
             action='read', status='old', iostat=ios)
        if (ios /= 0) call fail('the spec ' // spec_path // ' cannot be read')
        n = 0
        do while (n < max_spec)
            read(unit, iostat=ios) byte
            if (ios /= 0) exit
            n = n + 1
            text(n:n) = byte
        end do
        close(unit)
        if (ios /= 0 .and. ios /= iostat_end) &
            call fail('the spec ' // spec_path // ' cannot be read')
        spec = text(1:n) // c_null_char
    end subroutine read_spec

    ! ---- the scheme ----

    ! Grid spacing, the time step (half of leapfrog's limit for the highest mode, L <= 4),
    ! and the phase theta the mode turns by each step.
    subroutine set_scheme()
        integer :: n(3), a, q
        real(c_double) :: wsum, l, big_l
        n = [prob%nx, prob%ny, prob%nz]
        h = 1.0_c_double / (n - 1)
        wsum = abs(w(0)) + 2 * sum(abs(w(1:r)))
        dt = 0.5_c_double * 2 / sqrt(v2 * wsum * sum(1 / (h * h)))
        big_l = 0
        do a = 1, 3
            l = -w(0)
            do q = 1, r
                l = l - 2 * w(q) * cos(pi * q * h(a))
            end do
            big_l = big_l + v2 * dt * dt / (h(a) * h(a)) * l
        end do
        theta = acos(1 - big_l / 2)
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

    ! u0, v2, and the three time levels: u_prev = cos(theta) u0 (the exact step -1), u = u0,
    ! u_next = u0 (its boundary is set each step, its interior written by the stencil).
    subroutine setup_fields()
        integer :: g, stat
        character(len=24) :: text
        if (prob%precision == FDTUNE_FLOAT) then
            allocate(ff(0:prob%nx - 1, 0:prob%ny - 1, 0:prob%nz - 1), stat=stat)
        else
            allocate(fd(0:prob%nx - 1, 0:prob%ny - 1, 0:prob%nz - 1), stat=stat)
        end if
        if (stat /= 0) then
            write(text, '(i0)') bytes
            call fail('out of host memory for ' // trim(text) // ' bytes')
        end if
        call device_field(1.0_c_double, .false., u0)
        call device_field(v2, .true., v2_field)
        call device_field(cos(theta), .false., grids(1))
        do g = 2, 3
            call device_field(1.0_c_double, .false., grids(g))
        end do
    end subroutine setup_fields

    ! A device buffer holding scale * u0 (or, with uniform, scale everywhere).
    subroutine device_field(scale, uniform, buffer)
        real(c_double), intent(in) :: scale
        logical, intent(in) :: uniform
        type(c_ptr), intent(out) :: buffer
        real(c_double) :: row(0:prob%nx - 1)
        integer :: j, k
        do k = 0, prob%nz - 1
            do j = 0, prob%ny - 1
                if (uniform) then
                    row = scale
                else
                    row = scale * (sx * sy(j) * sz(k))
                end if
                if (allocated(ff)) then
                    ff(:, j, k) = real(row, c_float)
                else
                    fd(:, j, k) = row
                end if
            end do
        end do
        call check(fdtune_alloc(dev, bytes, buffer, err, errlen))
        call check(fdtune_upload(dev, buffer, host(), bytes, err, errlen))
    end subroutine device_field

    ! The host array, whichever precision it has.
    type(c_ptr) function host()
        if (allocated(ff)) then
            host = c_loc(ff)
        else
            host = c_loc(fd)
        end if
    end function host

    subroutine setup_kernels()
        character(kind=c_char, len=12), target :: define
        type(c_ptr) :: defines(1)
        call check(fdtune_kernel_open_spec(dev, prob, spec, opts, stencil, err, errlen))
        define = merge('REAL=float ', 'REAL=double', prob%precision == FDTUNE_FLOAT)
        define = trim(define) // c_null_char
        defines(1) = c_loc(define)
        call check(fdtune_function_compile(dev, boundary_source, 'wave_boundary'//c_null_char, &
                                           defines, 1, opts, boundary, err, errlen))
    end subroutine setup_kernels

    subroutine print_kernel()
        type(fdtune_kernel_info), pointer :: k
        character(len=:), allocatable :: line
        call c_f_pointer(fdtune_kernel_get_info(stencil), k)
        print '(a)', 'device:    ' // c_string(fdtune_device_backend(dev)) // ' ' // &
            c_string(fdtune_device_name(dev)) // ' (' // c_string(fdtune_device_arch(dev)) // &
            ')'
        line = 'stencil:   ' // chars(k%variant) // ', ' // source_of(k)
        if (k%tuned /= 0) then
            line = line // ' (match ' // chars(k%match) // ', fdtuned measured ' // &
                fixed(k%stored_gbps, 1) // ' GB/s, copy ' // fixed(k%copy_gbps, 1) // ' GB/s)'
        else
            line = line // ' (' // chars(k%reason) // ')'
        end if
        print '(a)', line
        print '(a)', 'modules:   ' // fixed(k%module_ms, 1) // ' ms, ' // &
            itoa(k%cache_hits) // ' from the disk cache, ' // itoa(k%compiles) // ' compiled'
        if (len(chars(k%note)) > 0) print '(a)', 'note:      ' // chars(k%note)
    end subroutine print_kernel

    ! ---- the time steps ----

    ! The first half of the steps measures the stencil, the second the step; a single step
    ! does both (its step_ms then includes the timer's wait). heat.c says why so.
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

    ! n steps with each stencil launch timed by device events, as fdtuned times it; the
    ! first, from an idle device, is left out of the mean when there are more.
    subroutine timed_steps(n)
        integer, intent(in) :: n
        real(c_double) :: ms
        integer :: s
        stencil_ms = 0
        do s = 1, n
            call check(fdtune_timer_start(dev, err, errlen))
            call launch_stencil()
            call check(fdtune_timer_stop(dev, ms, err, errlen))
            if (s > 1 .or. n == 1) stencil_ms = stencil_ms + ms
            call finish_step()
        end do
        stencil_ms = stencil_ms / max(n - 1, 1)
    end subroutine timed_steps

    ! n steps with nothing waited on between them: what a step costs the solver.
    subroutine free_steps(n)
        integer, intent(in) :: n
        integer :: s
        do s = 1, n
            call launch_stencil()
            call finish_step()
        end do
    end subroutine free_steps

    ! u_next = the spec of (u, u_prev, v2) with c2a = dt^2 / ha^2.
    subroutine launch_stencil()
        real(c_double) :: c2(3)
        c2 = dt * dt / (h * h)
        call check(fdtune_kernel_launch_fields(stencil, [grids(3)], &
                                               [grids(2), grids(1), v2_field], c2, err, errlen))
    end subroutine launch_stencil

    ! u_next's boundary = cos(n theta) u0 for the step n just made; then the levels turn.
    ! The boundary's arguments go by address, as cuLaunchKernel takes them (and copies them
    ! at the launch, so the levels may turn right after); c in the kernel's REAL.
    subroutine finish_step()
        integer(c_int), target :: nx, ny, nz
        real(c_double), target :: c_in_double
        real(c_float), target :: c_in_float
        type(c_ptr) :: args(6), oldest
        step = step + 1
        nx = prob%nx
        ny = prob%ny
        nz = prob%nz
        c_in_double = cos(step * theta)
        c_in_float = real(c_in_double, c_float)
        args = [c_loc(grids(3)), c_loc(u0), c_loc(nx), c_loc(ny), c_loc(nz), &
                c_loc(c_in_double)]
        if (prob%precision == FDTUNE_FLOAT) args(6) = c_loc(c_in_float)
        call check(fdtune_function_launch(boundary, [(nx + 127) / 128, (ny + 1) / 2, nz], &
                                          [128, 2, 1], args, err, errlen))
        oldest = grids(1)
        grids(1:2) = grids(2:3)
        grids(3) = oldest
    end subroutine finish_step

    ! ---- the result ----

    ! The max-norm distance of u (step N) from the exact cos(N theta) u0, and its bound.
    subroutine report()
        type(fdtune_kernel_info), pointer :: kernel
        real(c_double) :: c, gbps
        real(c_double), allocatable :: diff(:)   ! one row of the grid
        logical :: nan
        integer :: j, k
        call check(fdtune_download(dev, host(), grids(2), bytes, err, errlen))
        allocate(diff(0:prob%nx - 1))
        c = cos(steps * theta)
        error = 0
        nan = .false.
        do k = 0, prob%nz - 1
            do j = 0, prob%ny - 1
                if (allocated(ff)) then
                    diff = abs(real(ff(:, j, k), c_double) - c * (sx * sy(j) * sz(k)))
                else
                    diff = abs(fd(:, j, k) - c * (sx * sy(j) * sz(k)))
                end if
                error = max(error, maxval(diff))
                nan = nan .or. any(ieee_is_nan(diff))   ! which maxval may pass over
            end do
        end do
        if (nan) error = ieee_value(error, ieee_positive_inf)   ! the largest error of all
        bound = error_bound()
        gbps = fdtune_kernel_bytes(stencil) / (stencil_ms * 1e-3_c_double) / 1e9_c_double
        call c_f_pointer(fdtune_kernel_get_info(stencil), kernel)
        print '(a)', 'wave shape=' // itoa(prob%nx) // 'x' // itoa(prob%ny) // 'x' // &
            itoa(prob%nz) // ' precision=' // precision_name() // ' steps=' // itoa(steps) // &
            ' source=' // source_of(kernel) // ' variant=' // chars(kernel%variant) // &
            ' stencil_gbps=' // fixed(gbps, 1) // ' step_ms=' // fixed(step_ms, 4) // &
            ' error=' // sci(error) // ' error_bound=' // sci(bound)
        if (.not. (error <= bound)) write(error_unit, '(a)') 'wave_f: the error ' // &
            sci(error) // ' exceeds the bound ' // sci(bound)
    end subroutine report

    ! Rounding alone: a step's sum of 27 terms of size at most 2 + 1 + L <= 7 rounds by less
    ! than 64 ulps; an error made at step m reaches step N multiplied by
    ! |sin((N - m) theta) / sin theta| <= min(N - m, 1 / sin theta) (leapfrog's own
    ! growth), and the stored u0 and u_prev bring 4 ulps more.
    real(c_double) function error_bound()
        real(c_double) :: eps, growth
        eps = merge(real(epsilon(1.0_c_float), c_double), epsilon(1.0_c_double), &
                    prob%precision == FDTUNE_FLOAT)
        growth = min(real(steps, c_double), 1 / sin(theta))
        error_bound = 64 * eps * steps * growth + 4 * eps * growth
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
        write(error_unit, '(a)') 'wave_f: ' // why
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
        integer :: g
        if (c_associated(boundary)) call fdtune_function_free(boundary)
        if (c_associated(stencil)) call fdtune_kernel_close(stencil)
        do g = 1, 3
            if (c_associated(grids(g))) call fdtune_free(dev, grids(g))
        end do
        if (c_associated(v2_field)) call fdtune_free(dev, v2_field)
        if (c_associated(u0)) call fdtune_free(dev, u0)
        if (c_associated(dev)) call fdtune_device_close(dev)
        boundary = c_null_ptr
        stencil = c_null_ptr
        grids = c_null_ptr
        v2_field = c_null_ptr
        u0 = c_null_ptr
        dev = c_null_ptr
        if (allocated(fd)) deallocate(fd)
        if (allocated(ff)) deallocate(ff)
        if (allocated(sx)) deallocate(sx, sy, sz)
        if (allocated(spec)) deallocate(spec)   ! libc's exit frees nothing of the program's
        if (allocated(spec_path)) deallocate(spec_path)
    end subroutine teardown

    ! ---- text: C strings in, printf's formats out (heat.f90's, as each example stands
    ! alone) ----

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
end program wave
