! Parallax's API for Fortran programs: regions, marks, phases and flow
! control, recorded when the program runs under `parallax run`.
!
!   use parallax
!   integer, save :: r_solve = 0, m_res = 0
!   call parallax_begin(r_solve, "solve")
!   ...
!   call parallax_mark(m_res, "residual", int(res * 1e6, 8))
!   call parallax_end()
!
! Each region or mark keeps its id in an integer of its own (saved, starting
! at 0). Regions must nest: parallax_end closes the innermost one.
! Build: gfortran -I$PREFIX/include/parallax app.f90 -L$PREFIX/lib/parallax -lparallax_api
! A program built with it runs unchanged without Parallax.
module parallax
    use, intrinsic :: iso_c_binding
    implicit none
    private
    public :: parallax_begin, parallax_end, parallax_mark, parallax_phase, &
              parallax_flow_off, parallax_flow_on
    public :: PARALLAX_USER, PARALLAX_FUNCTION, PARALLAX_LOOP, PARALLAX_IO

    integer, parameter :: PARALLAX_USER = 0, PARALLAX_FUNCTION = 1, &
                          PARALLAX_LOOP = 2, PARALLAX_IO = 24

    interface
        subroutine c_begin(id, name, len, kind) bind(C, name="parallax_fortran_begin")
            import :: c_int32_t, c_char, c_size_t, c_int
            integer(c_int32_t), intent(inout) :: id
            character(kind=c_char), intent(in) :: name(*)
            integer(c_size_t), value :: len
            integer(c_int), value :: kind
        end subroutine
        subroutine c_end() bind(C, name="parallax_fortran_end")
        end subroutine
        subroutine c_mark(id, name, len, value) bind(C, name="parallax_fortran_mark")
            import :: c_int32_t, c_char, c_size_t, c_int64_t
            integer(c_int32_t), intent(inout) :: id
            character(kind=c_char), intent(in) :: name(*)
            integer(c_size_t), value :: len
            integer(c_int64_t), value :: value
        end subroutine
        subroutine c_flow(on) bind(C, name="parallax_fortran_flow")
            import :: c_int
            integer(c_int), value :: on
        end subroutine
    end interface

contains

    !> Enters region `name` (of kind `kind`, PARALLAX_USER by default); `id`
    !> is the region's saved integer.
    subroutine parallax_begin(id, name, kind)
        integer, intent(inout) :: id
        character(len=*), intent(in) :: name
        integer, intent(in), optional :: kind
        integer(c_int32_t) :: cid
        integer(c_int) :: k
        k = PARALLAX_USER
        if (present(kind)) k = kind
        cid = int(id, c_int32_t)
        call c_begin(cid, name, int(len(name), c_size_t), k)
        id = int(cid)
    end subroutine

    !> Leaves the innermost region.
    subroutine parallax_end()
        call c_end()
    end subroutine

    !> A mark named `name` with `value`.
    subroutine parallax_mark(id, name, value)
        integer, intent(inout) :: id
        character(len=*), intent(in) :: name
        integer(8), intent(in) :: value
        integer(c_int32_t) :: cid
        cid = int(id, c_int32_t)
        call c_mark(cid, name, int(len(name), c_size_t), int(value, c_int64_t))
        id = int(cid)
    end subroutine

    !> A phase marker: a mark named "phase: " // name.
    subroutine parallax_phase(id, name)
        integer, intent(inout) :: id
        character(len=*), intent(in) :: name
        call parallax_mark(id, "phase: " // name, 0_8)
    end subroutine

    subroutine parallax_flow_off()
        call c_flow(0_c_int)
    end subroutine

    subroutine parallax_flow_on()
        call c_flow(1_c_int)
    end subroutine
end module parallax
