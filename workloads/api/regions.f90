! Parallax's Fortran module (include/parallax.f90): nested regions, a mark
! and a phase marker.
program regions
    use parallax
    implicit none
    integer, save :: r_solve = 0, r_sweep = 0, m_res = 0, p_setup = 0
    integer :: it, k
    real(8) :: s
    s = 0
    call parallax_phase(p_setup, "setup")
    call parallax_begin(r_solve, "solve", PARALLAX_FUNCTION)
    do it = 1, 4
        call parallax_begin(r_sweep, "sweep", PARALLAX_LOOP)
        do k = 1, 1000
            s = s + k * 0.5d0
        end do
        call parallax_mark(m_res, "residual", int(it, 8))
        call parallax_end()
    end do
    call parallax_end()
    print '(a,f0.0)', 'checksum=', s
end program regions
