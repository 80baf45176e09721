! fortran_layout.f90 - checks that the bind(C) types and parameters of the Fortran module
! fdtune (cli/fortran/fdtune.f90) are what the C headers say: every struct's size, the
! offsets of the fields that follow each array or nested struct, and every constant, each
! compared with the value tests/fortran_layout.c reports from the C compiler. Prints
! `layout ok`, or each mismatch and stops with code 1.
!
!     gfortran -std=f2008 -J MODDIR -c cli/fortran/fdtune.f90 -o MODDIR/fdtune.o
!     cc -Icli/include -c tests/fortran_layout.c -o fl.o
!     gfortran -std=f2008 -I MODDIR tests/fortran_layout.f90 fl.o -o fortran_layout
!     ./fortran_layout
program fortran_layout
    use, intrinsic :: iso_c_binding
    use fdtune
    implicit none

    interface
        ! What the C compiler makes of name (a struct, "struct.field", or a constant).
        function fdtune_c_layout(name) bind(C, name="fdtune_c_layout")
            import :: c_char, c_long_long
            character(kind=c_char), intent(in) :: name(*)
            integer(c_long_long) :: fdtune_c_layout
        end function fdtune_c_layout

        function fdtune_c_layout_count() bind(C, name="fdtune_c_layout_count")
            import :: c_int
            integer(c_int) :: fdtune_c_layout_count
        end function fdtune_c_layout_count
    end interface

    integer, parameter :: i8 = c_long_long
    type(fdtune_problem), target :: p
    type(fdtune_answer), target :: a
    type(fdtune_kernel_options), target :: o
    type(fdtune_kernel_info), target :: ki
    type(fdtune_layout), target :: l
    integer :: checked = 0, bad = 0

    call check('fdtune_problem', int(c_sizeof(p), i8))
    call check('fdtune_problem.radius', off(c_loc(p), c_loc(p%radius)))
    call check('fdtune_problem.precision', off(c_loc(p), c_loc(p%precision)))
    call check('fdtune_problem.cache', off(c_loc(p), c_loc(p%cache)))
    call check('fdtune_problem.tune_if_missing', off(c_loc(p), c_loc(p%tune_if_missing)))
    call check('fdtune_problem.pitch', off(c_loc(p), c_loc(p%pitch)))
    call check('fdtune_problem.offset', off(c_loc(p), c_loc(p%offset)))

    call check('fdtune_layout', int(c_sizeof(l), i8))
    call check('fdtune_layout.offset', off(c_loc(l), c_loc(l%offset)))
    call check('fdtune_layout.dense_gbps', off(c_loc(l), c_loc(l%dense_gbps)))
    call check('fdtune_layout.gain', off(c_loc(l), c_loc(l%gain)))

    call check('fdtune_answer', int(c_sizeof(a), i8))
    call check('fdtune_answer.device_match', off(c_loc(a), c_loc(a%device_match)))
    call check('fdtune_answer.from', off(c_loc(a), c_loc(a%from)))
    call check('sizeof fdtune_answer.from', int(c_sizeof(a%from), i8))
    call check('fdtune_answer.from.fingerprint', off(c_loc(a), c_loc(a%from%fingerprint)))
    call check('fdtune_answer.distance', off(c_loc(a), c_loc(a%distance)))
    call check('fdtune_answer.variant', off(c_loc(a), c_loc(a%variant)))
    call check('fdtune_answer.family', off(c_loc(a), c_loc(a%family)))
    call check('fdtune_answer.sources', off(c_loc(a), c_loc(a%sources)))
    call check('fdtune_answer.nsources', off(c_loc(a), c_loc(a%nsources)))
    call check('fdtune_answer.source', off(c_loc(a), c_loc(a%source)))
    call check('fdtune_answer.source_hash', off(c_loc(a), c_loc(a%source_hash)))
    call check('fdtune_answer.entry', off(c_loc(a), c_loc(a%entry)))
    call check('fdtune_answer.block', off(c_loc(a), c_loc(a%block)))
    call check('fdtune_answer.grid', off(c_loc(a), c_loc(a%grid)))
    call check('fdtune_answer.defines', off(c_loc(a), c_loc(a%defines)))
    call check('fdtune_answer.ndefines', off(c_loc(a), c_loc(a%ndefines)))
    call check('fdtune_answer.gbps', off(c_loc(a), c_loc(a%gbps)))
    call check('fdtune_answer.kernel1_gbps', off(c_loc(a), c_loc(a%kernel1_gbps)))
    call check('fdtune_answer.kernels_current', off(c_loc(a), c_loc(a%kernels_current)))
    call check('fdtune_answer.persist', off(c_loc(a), c_loc(a%persist)))
    call check('sizeof fdtune_answer.persist', int(c_sizeof(a%persist), i8))
    call check('fdtune_answer.persist.nsources', off(c_loc(a), c_loc(a%persist%nsources)))
    call check('fdtune_answer.persist.source_hash', &
               off(c_loc(a), c_loc(a%persist%source_hash)))
    call check('fdtune_answer.persist.entry', off(c_loc(a), c_loc(a%persist%entry)))
    call check('fdtune_answer.persist.grid', off(c_loc(a), c_loc(a%persist%grid)))
    call check('fdtune_answer.job', off(c_loc(a), c_loc(a%job)))
    call check('fdtune_answer.layout', off(c_loc(a), c_loc(a%layout)))

    call check('fdtune_kernel_options', int(c_sizeof(o), i8))
    call check('fdtune_kernel_options.timeout_ms', off(c_loc(o), c_loc(o%timeout_ms)))
    call check('fdtune_kernel_options.cache_dir', off(c_loc(o), c_loc(o%cache_dir)))
    call check('fdtune_kernel_options.kernel1', off(c_loc(o), c_loc(o%kernel1)))

    call check('fdtune_kernel_info', int(c_sizeof(ki), i8))
    call check('fdtune_kernel_info.reason', off(c_loc(ki), c_loc(ki%reason)))
    call check('fdtune_kernel_info.variant', off(c_loc(ki), c_loc(ki%variant)))
    call check('fdtune_kernel_info.match', off(c_loc(ki), c_loc(ki%match)))
    call check('fdtune_kernel_info.grid', off(c_loc(ki), c_loc(ki%grid)))
    call check('fdtune_kernel_info.block', off(c_loc(ki), c_loc(ki%block)))
    call check('fdtune_kernel_info.stored_gbps', off(c_loc(ki), c_loc(ki%stored_gbps)))
    call check('fdtune_kernel_info.copy_gbps', off(c_loc(ki), c_loc(ki%copy_gbps)))
    call check('fdtune_kernel_info.persist', off(c_loc(ki), c_loc(ki%persist)))
    call check('fdtune_kernel_info.module_ms', off(c_loc(ki), c_loc(ki%module_ms)))
    call check('fdtune_kernel_info.cache_hits', off(c_loc(ki), c_loc(ki%cache_hits)))
    call check('fdtune_kernel_info.compiles', off(c_loc(ki), c_loc(ki%compiles)))
    call check('fdtune_kernel_info.note', off(c_loc(ki), c_loc(ki%note)))
    call check('fdtune_kernel_info.layout', off(c_loc(ki), c_loc(ki%layout)))

    ! The C enums are stored as int; the module declares them integer(c_int).
    call check('sizeof fdtune_precision', int(c_sizeof(p%precision), i8))
    call check('sizeof fdtune_cache', int(c_sizeof(p%cache), i8))

    call check('FDTUNE_OK', int(FDTUNE_OK, i8))
    call check('FDTUNE_ERR_CONNECT', int(FDTUNE_ERR_CONNECT, i8))
    call check('FDTUNE_ERR_IO', int(FDTUNE_ERR_IO, i8))
    call check('FDTUNE_ERR_ANSWER', int(FDTUNE_ERR_ANSWER, i8))
    call check('FDTUNE_ERR_REFUSED', int(FDTUNE_ERR_REFUSED, i8))
    call check('FDTUNE_ERR_ARG', int(FDTUNE_ERR_ARG, i8))
    call check('FDTUNE_ERR_DEVICE', int(FDTUNE_ERR_DEVICE, i8))
    call check('FDTUNE_ERR_COMPILE', int(FDTUNE_ERR_COMPILE, i8))
    call check('FDTUNE_ERR_LAYOUT', int(FDTUNE_ERR_LAYOUT, i8))
    call check('FDTUNE_PITCH_AUTO', int(FDTUNE_PITCH_AUTO, i8))
    call check('FDTUNE_DEFAULT_TIMEOUT_MS', int(FDTUNE_DEFAULT_TIMEOUT_MS, i8))
    call check('FDTUNE_DOUBLE', int(FDTUNE_DOUBLE, i8))
    call check('FDTUNE_FLOAT', int(FDTUNE_FLOAT, i8))
    call check('FDTUNE_HOT', int(FDTUNE_HOT, i8))
    call check('FDTUNE_COLD', int(FDTUNE_COLD, i8))
    call check('FDTUNE_PERSIST', int(FDTUNE_PERSIST, i8))
    call check('FDTUNE_NAME_MAX', int(FDTUNE_NAME_MAX, i8))
    call check('FDTUNE_DEFINES_MAX', int(FDTUNE_DEFINES_MAX, i8))
    call check('FDTUNE_DEFINE_MAX', int(FDTUNE_DEFINE_MAX, i8))
    call check('FDTUNE_SOURCES_MAX', int(FDTUNE_SOURCES_MAX, i8))
    call check('FDTUNE_HASH_LEN', int(FDTUNE_HASH_LEN, i8))

    ! A name added to the C table but not checked here would go unnoticed otherwise.
    if (checked /= fdtune_c_layout_count()) then
        print '(a, i0, a, i0, a)', 'the C table has ', fdtune_c_layout_count(), &
            ' names, this program checked ', checked, ': check them all'
        bad = bad + 1
    end if

    if (bad /= 0) then
        print '(i0, a)', bad, ' layout mismatches'
        stop 1
    end if
    print '(a)', 'layout ok'

contains

    ! Bytes from the start of a struct to one of its fields.
    function off(base, field) result(bytes)
        type(c_ptr), intent(in) :: base, field
        integer(c_long_long) :: bytes
        bytes = int(transfer(field, 0_c_intptr_t) - transfer(base, 0_c_intptr_t), i8)
    end function off

    subroutine check(name, fortran)
        character(*), intent(in) :: name
        integer(c_long_long), intent(in) :: fortran
        integer(c_long_long) :: c
        checked = checked + 1
        c = fdtune_c_layout(name//c_null_char)
        if (c /= fortran) then
            print '(a, a, i0, a, i0)', name, ': C ', c, ', Fortran ', fortran
            bad = bad + 1
        end if
    end subroutine check
end program fortran_layout
