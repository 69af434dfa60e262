! Sequential Fortran kernel at three granularities, built with
! -finstrument-functions: every function of the module is a pair of probes
! when measured.
!
!   seq_f90 fine N     N iterations of five nested small functions
!   seq_f90 medium N   N calls of a leaf of MEDIUM_ROUNDS rounds
!   seq_f90 coarse N   N calls of a leaf of COARSE_ROUNDS rounds
!
! Prints the kernel's wall time (one JSON line, timed with
! clock_gettime(CLOCK_MONOTONIC)) and a checksum.
module user_kernels
  use iso_c_binding
  implicit none
  integer, parameter :: MEDIUM_ROUNDS = 6, COARSE_ROUNDS = 40
  integer(c_int), parameter :: CLOCK_MONOTONIC = 1

  type, bind(C) :: timespec
    integer(c_long) :: tv_sec, tv_nsec
  end type timespec

  interface
    integer(c_int) function clock_gettime(clk, tp) bind(C, name="clock_gettime")
      import :: c_int, timespec
      integer(c_int), value :: clk
      type(timespec), intent(out) :: tp
    end function clock_gettime
  end interface

contains

  real(c_double) function now_s()
    type(timespec) :: t
    integer(c_int) :: rc
    rc = clock_gettime(CLOCK_MONOTONIC, t)
    now_s = real(t%tv_sec, c_double) + 1.0d-9 * real(t%tv_nsec, c_double)
  end function now_s

  real(c_double) function halve(x)
    real(c_double), intent(in) :: x
    halve = 0.5d0 * x
  end function halve

  real(c_double) function quarter(x)
    real(c_double), intent(in) :: x
    quarter = 0.25d0 * x
  end function quarter

  real(c_double) function damp(x)
    real(c_double), intent(in) :: x
    damp = halve(x) + quarter(x)
  end function damp

  real(c_double) function offset(i)
    integer(c_long), intent(in) :: i
    offset = real(iand(i, 7_c_long), c_double)
  end function offset

  real(c_double) function step(x, i)
    real(c_double), intent(in) :: x
    integer(c_long), intent(in) :: i
    step = damp(x) + offset(i)
  end function step

  real(c_double) function leaf(x, rounds)
    real(c_double), intent(in) :: x
    integer, intent(in) :: rounds
    integer :: r
    leaf = x
    do r = 1, rounds
      leaf = leaf * 0.75d0 + 1.0d0
    end do
  end function leaf

  real(c_double) function timed_kernel(rounds, n) bind(C, name="timed_kernel")
    integer(c_int), value :: rounds
    integer(c_long), value :: n
    integer(c_long) :: i
    real(c_double) :: x
    x = 1.0d0
    if (rounds == 0) then
      do i = 1, n
        x = step(x, i)
      end do
    else
      do i = 1, n
        x = leaf(x + 1.0d-9 * real(iand(i, 1023_c_long), c_double), rounds)
      end do
    end if
    timed_kernel = x
  end function timed_kernel

end module user_kernels

program seq_f90
  use user_kernels
  implicit none
  character(len=32) :: kernel, arg
  integer(c_long) :: n
  integer(c_int) :: rounds
  integer :: stat
  real(c_double) :: t0, t1, x
  character(len=32) :: secs

  call get_command_argument(1, kernel)
  call get_command_argument(2, arg)
  read (arg, *, iostat=stat) n
  if (command_argument_count() /= 2 .or. stat /= 0 .or. n <= 0) then
    write (0, '(a)') 'usage: seq_f90 KERNEL N (KERNEL: fine medium coarse; N > 0)'
    stop 2
  end if
  select case (trim(kernel))
  case ('fine')
    rounds = 0
  case ('medium')
    rounds = MEDIUM_ROUNDS
  case ('coarse')
    rounds = COARSE_ROUNDS
  case default
    write (0, '(a)') 'usage: seq_f90 KERNEL N (KERNEL: fine medium coarse; N > 0)'
    stop 2
  end select
  t0 = now_s()
  x = timed_kernel(rounds, n)
  t1 = now_s()
  ! f0.9 would leave out the leading zero that JSON needs.
  write (secs, '(f20.9)') t1 - t0
  write (*, '(a,a,a,a,a)') '{"kernel":"', trim(kernel), '","rank":0,"seconds":', trim(adjustl(secs)), '}'
  write (*, '(a,es24.16)') 'checksum ', x
end program seq_f90
