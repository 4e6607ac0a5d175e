//! Whole-wave loops built twice: for baseline x86-64 (SSE2, the build's target) and for
//! AVX2, where a 32-lane register is four host vectors rather than eight; the AVX2
//! build runs where the CPU has it (detected at run time, once). Both builds are the
//! same Rust (a [`Whole`]'s `run`, with what it inlines), so they compute the same
//! bits.

#![allow(unsafe_code)]

#[cfg(test)]
thread_local! {
    /// Tests run the baseline build on a CPU with AVX2 by setting this.
    pub(crate) static BASELINE_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the CPU has AVX2 (cached by the standard library after the first look).
#[inline(always)]
fn avx2() -> bool {
    #[cfg(test)]
    if BASELINE_ONLY.with(|b| b.get()) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[allow(unreachable_code)]
    false
}

/// A whole-wave operation ready to run. Its `run` must be `#[inline(always)]` over
/// `#[inline(always)]` code: what it calls out of line keeps the baseline build.
pub(crate) trait Whole {
    type Out;
    fn run(self) -> Self::Out;
}

/// Runs `op`, compiled for AVX2 where the CPU has it.
#[inline(always)]
pub(crate) fn run<W: Whole>(op: W) -> W::Out {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: the CPU has AVX2, checked just above; that is all `run_avx2`
        // requires.
        return unsafe { run_avx2(op) };
    }
    op.run()
}

/// [`run`]'s AVX2 build: `op.run()` inlined into a function compiled for AVX2 (a
/// callee whose features are a subset of its caller's may be inlined).
///
/// # Safety
///
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn run_avx2<W: Whole>(op: W) -> W::Out {
    op.run()
}
