! Fortran for compiler instrumentation: a module procedure called STEPS
! times from the main program.
module heat
contains
  subroutine relax(u, n)
    integer, intent(in) :: n
    real(8), intent(inout) :: u(n)
    integer :: i
    do i = 2, n - 1
      u(i) = 0.5d0 * (u(i - 1) + u(i + 1))
    end do
  end subroutine relax
end module heat

program main
  use heat
  real(8) :: u(100)
  integer :: k
  u = 1.0d0
  u(1) = 0.0d0
  do k = 1, 4
    call relax(u, 100)
  end do
  print *, sum(u)
end program main
