//! The types and constants of the part of libotf2's C API the export and
//! import use (OTF2 3.x), with the values of the C headers.
#![allow(dead_code)]

use std::ffi::c_int;

pub type ErrorCode = c_int;
pub type TimeStamp = u64;
pub type StringRef = u32;
pub type LocationRef = u64;
pub type RegionRef = u32;
pub type CommRef = u32;
pub type GroupRef = u32;
pub type MetricRef = u32;
pub type ParameterRef = u32;
pub type AttributeRef = u32;
pub type RmaWinRef = u32;
pub type CallbackCode = c_int;

pub const SUCCESS: ErrorCode = 0;
pub const CALLBACK_SUCCESS: CallbackCode = 0;
pub const CALLBACK_INTERRUPT: CallbackCode = 1;
pub const UNDEFINED_U32: u32 = u32::MAX;
pub const UNDEFINED_U64: u64 = u64::MAX;

pub const FILEMODE_WRITE: u8 = 0;
pub const SUBSTRATE_POSIX: u8 = 1;
pub const COMPRESSION_NONE: u8 = 1;
pub const FLUSH: u8 = 1;

pub const PARADIGM_UNKNOWN: u8 = 0;
pub const PARADIGM_USER: u8 = 1;
pub const PARADIGM_COMPILER: u8 = 2;
pub const PARADIGM_OPENMP: u8 = 3;
pub const PARADIGM_MPI: u8 = 4;
pub const PARADIGM_MEASUREMENT_SYSTEM: u8 = 6;
pub const PARADIGM_PTHREAD: u8 = 7;
pub const PARADIGM_SHMEM: u8 = 13;

pub const ROLE_UNKNOWN: u8 = 0;
pub const ROLE_FUNCTION: u8 = 1;
pub const ROLE_WRAPPER: u8 = 2;
pub const ROLE_LOOP: u8 = 3;
pub const ROLE_CODE: u8 = 4;
pub const ROLE_PARALLEL: u8 = 5;
pub const ROLE_CRITICAL: u8 = 12;
pub const ROLE_ATOMIC: u8 = 14;
pub const ROLE_BARRIER: u8 = 15;
pub const ROLE_IMPLICIT_BARRIER: u8 = 16;
pub const ROLE_FLUSH: u8 = 17;
pub const ROLE_ORDERED: u8 = 18;
pub const ROLE_TASK_CREATE: u8 = 21;
pub const ROLE_TASK_WAIT: u8 = 22;
pub const ROLE_COLL_ONE2ALL: u8 = 23;
pub const ROLE_COLL_ALL2ONE: u8 = 24;
pub const ROLE_COLL_ALL2ALL: u8 = 25;
pub const ROLE_COLL_OTHER: u8 = 26;
pub const ROLE_FILE_IO: u8 = 27;
pub const ROLE_POINT2POINT: u8 = 28;
pub const ROLE_RMA: u8 = 29;
pub const ROLE_DATA_TRANSFER: u8 = 30;
pub const ROLE_ARTIFICIAL: u8 = 31;
pub const ROLE_THREAD_CREATE: u8 = 32;
pub const ROLE_THREAD_WAIT: u8 = 33;
pub const ROLE_FILE_IO_METADATA: u8 = 38;

pub const LOCATION_GROUP_TYPE_PROCESS: u8 = 1;
pub const LOCATION_TYPE_CPU_THREAD: u8 = 1;
pub const GROUP_TYPE_LOCATIONS: u8 = 1;
pub const GROUP_TYPE_COMM_LOCATIONS: u8 = 4;
pub const GROUP_TYPE_COMM_GROUP: u8 = 5;
pub const GROUP_TYPE_COMM_SELF: u8 = 6;

pub const TYPE_UINT64: u8 = 4;
pub const TYPE_INT64: u8 = 8;
pub const TYPE_DOUBLE: u8 = 10;

pub const METRIC_TYPE_USER: u8 = 3;
pub const METRIC_ABSOLUTE_POINT: u8 = 1 | (1 << 4);
pub const BASE_DECIMAL: u8 = 1;
pub const METRIC_ASYNCHRONOUS: u8 = 2;
pub const RECORDER_KIND_CPU: u8 = 2;
pub const PARAMETER_TYPE_INT64: u8 = 1;
pub const PARAMETER_TYPE_UINT64: u8 = 2;

pub const RMA_SYNC_TYPE_MEMORY: u8 = 0;
pub const RMA_ATOMIC_TYPE_ACCUMULATE: u8 = 0;

pub const COLL_BARRIER: u8 = 0;
pub const COLL_BCAST: u8 = 1;
pub const COLL_GATHER: u8 = 2;
pub const COLL_GATHERV: u8 = 3;
pub const COLL_SCATTER: u8 = 4;
pub const COLL_SCATTERV: u8 = 5;
pub const COLL_ALLGATHER: u8 = 6;
pub const COLL_ALLGATHERV: u8 = 7;
pub const COLL_ALLTOALL: u8 = 8;
pub const COLL_ALLTOALLV: u8 = 9;
pub const COLL_ALLTOALLW: u8 = 10;
pub const COLL_ALLREDUCE: u8 = 11;
pub const COLL_REDUCE: u8 = 12;
pub const COLL_REDUCE_SCATTER: u8 = 13;
pub const COLL_SCAN: u8 = 14;
pub const COLL_EXSCAN: u8 = 15;
pub const COLL_REDUCE_SCATTER_BLOCK: u8 = 16;
