#include <mpi.h>
#include "pxl.h"
