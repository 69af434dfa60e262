//! FFI declarations of libotf2.
