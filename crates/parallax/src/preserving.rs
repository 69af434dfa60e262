//! Probes that preserve the caller's registers.
//!
//! A call to an ordinary probe tells the compiler that every caller-saved
//! register is lost, so a loop with a probe inside keeps its values on the
//! stack and reloads them after each call: the probe changes the code
//! around it, by an amount that depends on that code (the "indirect
//! perturbation" of source-level probes, table 3.1 of Malony's thesis),
//! which no calibration can know. These probes are called from inline
//! assembly through a trampoline that saves and restores every register
//! the call could change, so the compiler builds the surrounding code as if
//! the probe were not there, and the probe costs the same wherever it is
//! (the thesis's assembly-level probes). They cost more than ordinary
//! probes; calibration measures them on their own (`enter_preserving`,
//! `leave_preserving`). On other targets than x86-64 (and in builds that
//! use AVX-512, whose registers they do not save) they are ordinary probes.

use std::sync::atomic::Ordering::Relaxed;

use parallax_model::event::RegionId;

use crate::process::FLAGS;
use crate::region;

/// Enters region `id` under flags `flags`, preserving every register but
/// the result's; whether the enter was recorded.
#[inline(always)]
pub(crate) fn enter_as(flags: u8, id: RegionId) -> bool {
    imp::enter(flags, id)
}

/// Leaves the innermost region entered with [`enter`], preserving every
/// register.
#[inline(always)]
pub fn leave() {
    imp::leave()
}

/// Enters region `id` (from [`crate::register_region`] or a call site)
/// with a register-preserving probe; pair a `true` result with [`leave`].
#[inline(always)]
pub fn enter(id: RegionId) -> bool {
    enter_as(FLAGS.load(Relaxed), id)
}

/// Defines the function `$name` (`$(#[$attr])*` on it, such as
/// `#[no_mangle]` to export it) that saves every register a call may change
/// but rax, calls `$body` with the caller's arguments, restores them and
/// returns `$body`'s result. Callers need not align the stack: it is
/// realigned. For the register-preserving probes here and in the
/// interposition library; x86-64 only.
#[doc(hidden)]
#[macro_export]
macro_rules! preserving_trampoline {
    ($(#[$attr:meta])* $name:ident, $body:path) => {
        #[cfg(not(target_feature = "avx"))]
        $crate::preserving_trampoline!(
            @naked $(#[$attr])* $name, $body, "256",
            "movdqu [rsp + 0], xmm0\nmovdqu [rsp + 16], xmm1\nmovdqu [rsp + 32], xmm2\nmovdqu [rsp + 48], xmm3\nmovdqu [rsp + 64], xmm4\nmovdqu [rsp + 80], xmm5\nmovdqu [rsp + 96], xmm6\nmovdqu [rsp + 112], xmm7\nmovdqu [rsp + 128], xmm8\nmovdqu [rsp + 144], xmm9\nmovdqu [rsp + 160], xmm10\nmovdqu [rsp + 176], xmm11\nmovdqu [rsp + 192], xmm12\nmovdqu [rsp + 208], xmm13\nmovdqu [rsp + 224], xmm14\nmovdqu [rsp + 240], xmm15",
            "movdqu xmm0, [rsp + 0]\nmovdqu xmm1, [rsp + 16]\nmovdqu xmm2, [rsp + 32]\nmovdqu xmm3, [rsp + 48]\nmovdqu xmm4, [rsp + 64]\nmovdqu xmm5, [rsp + 80]\nmovdqu xmm6, [rsp + 96]\nmovdqu xmm7, [rsp + 112]\nmovdqu xmm8, [rsp + 128]\nmovdqu xmm9, [rsp + 144]\nmovdqu xmm10, [rsp + 160]\nmovdqu xmm11, [rsp + 176]\nmovdqu xmm12, [rsp + 192]\nmovdqu xmm13, [rsp + 208]\nmovdqu xmm14, [rsp + 224]\nmovdqu xmm15, [rsp + 240]"
        );
        #[cfg(target_feature = "avx")]
        $crate::preserving_trampoline!(
            @naked $(#[$attr])* $name, $body, "512",
            "vmovdqu [rsp + 0], ymm0\nvmovdqu [rsp + 32], ymm1\nvmovdqu [rsp + 64], ymm2\nvmovdqu [rsp + 96], ymm3\nvmovdqu [rsp + 128], ymm4\nvmovdqu [rsp + 160], ymm5\nvmovdqu [rsp + 192], ymm6\nvmovdqu [rsp + 224], ymm7\nvmovdqu [rsp + 256], ymm8\nvmovdqu [rsp + 288], ymm9\nvmovdqu [rsp + 320], ymm10\nvmovdqu [rsp + 352], ymm11\nvmovdqu [rsp + 384], ymm12\nvmovdqu [rsp + 416], ymm13\nvmovdqu [rsp + 448], ymm14\nvmovdqu [rsp + 480], ymm15",
            "vmovdqu ymm0, [rsp + 0]\nvmovdqu ymm1, [rsp + 32]\nvmovdqu ymm2, [rsp + 64]\nvmovdqu ymm3, [rsp + 96]\nvmovdqu ymm4, [rsp + 128]\nvmovdqu ymm5, [rsp + 160]\nvmovdqu ymm6, [rsp + 192]\nvmovdqu ymm7, [rsp + 224]\nvmovdqu ymm8, [rsp + 256]\nvmovdqu ymm9, [rsp + 288]\nvmovdqu ymm10, [rsp + 320]\nvmovdqu ymm11, [rsp + 352]\nvmovdqu ymm12, [rsp + 384]\nvmovdqu ymm13, [rsp + 416]\nvmovdqu ymm14, [rsp + 448]\nvmovdqu ymm15, [rsp + 480]"
        );
    };
    (@naked $(#[$attr:meta])* $name:ident, $body:path, $room:literal, $save:literal, $restore:literal) => {
        /// A register-preserving trampoline: not callable from Rust code.
        ///
        /// # Safety
        /// Only from inline assembly, as `preserving_trampoline!` says.
        #[unsafe(naked)]
        $(#[$attr])*
        pub unsafe extern "C" fn $name() {
            ::core::arch::naked_asm!(
                "push rbp",
                "mov rbp, rsp",
                "and rsp, -32",
                "push rcx",
                "push rdx",
                "push rsi",
                "push rdi",
                "push r8",
                "push r9",
                "push r10",
                "push r11",
                concat!("sub rsp, ", $room),
                $save,
                "call {body}",
                $restore,
                concat!("add rsp, ", $room),
                "pop r11",
                "pop r10",
                "pop r9",
                "pop r8",
                "pop rdi",
                "pop rsi",
                "pop rdx",
                "pop rcx",
                "mov rsp, rbp",
                "pop rbp",
                "ret",
                body = sym $body,
            );
        }
    };
}

extern "C" fn enter_body(id: u32, flags: u32) -> u32 {
    region::enter_as(flags as u8, id) as u32
}

extern "C" fn leave_body() {
    region::leave();
}

#[cfg(all(target_arch = "x86_64", not(target_feature = "avx512f")))]
mod imp {
    use std::arch::asm;

    crate::preserving_trampoline!(enter_trampoline, super::enter_body);
    crate::preserving_trampoline!(leave_trampoline, super::leave_body);

    #[inline(always)]
    pub(super) fn enter(flags: u8, id: u32) -> bool {
        let ok: u32;
        // Safety: the trampoline preserves every register but eax, steps
        // over the red zone, and the stack is aligned (no `nostack`).
        unsafe {
            asm!(
                "sub rsp, 128",
                "call {f}",
                "add rsp, 128",
                f = sym enter_trampoline,
                in("edi") id,
                in("esi") flags as u32,
                lateout("eax") ok,
            );
        }
        ok != 0
    }

    #[inline(always)]
    pub(super) fn leave() {
        // Safety: as in `enter`.
        unsafe {
            asm!(
                "sub rsp, 128",
                "call {f}",
                "add rsp, 128",
                f = sym leave_trampoline,
                out("eax") _,
            );
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", not(target_feature = "avx512f"))))]
mod imp {
    #[inline(always)]
    pub(super) fn enter(flags: u8, id: u32) -> bool {
        super::enter_body(id, flags as u32) != 0
    }

    #[inline(always)]
    pub(super) fn leave() {
        super::leave_body()
    }
}
