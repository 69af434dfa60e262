#include <shmem.h>
#include "pxl.h"
