//! How far a judging pass has got, told to whoever shows it: judging a run with a small local model takes
//! minutes, and the binary draws a bar on stderr from these calls.

/// Told as a judging pass advances; `judged` is called from concurrent judge tasks.
pub trait JudgeProgress: Sync {
    /// `total` items (answers, or compared rounds) go to the judge; those decided by a rule do not.
    fn start(&self, total: usize);
    /// One more item was judged.
    fn judged(&self);
    /// The pass ended, also when a judge call failed.
    fn end(&self);
}

/// Shows nothing: for callers with no one watching (tests, library users).
pub struct Quiet;

impl JudgeProgress for Quiet {
    fn start(&self, _total: usize) {}
    fn judged(&self) {}
    fn end(&self) {}
}
