//! Fail fast on a setup error: when the first episodes of a batch all end in the same error without
//! ever reaching the model (a rejected key, an unknown model), the rest would too. And stop on an
//! outage of the tool server: episodes in a row that could not reach it.

use super::summary::EpisodeView;
use crate::toolbench::answer::ErrorCause;

/// The batch stops as a setup error when its first episodes (this many, or all of them when fewer
/// are to run) all ended in the same error without ever getting a reply from the model.
pub const FAIL_FAST_AFTER: usize = 3;

/// Watches the first episodes for a setup error shared by all of them.
pub(super) struct FailFast {
    /// Episodes that must agree before the batch stops.
    needed: usize,
    /// The error of the first episodes and how many had it; `None` once any episode did otherwise.
    streak: Option<(String, usize)>,
    decided: bool,
}

impl FailFast {
    pub(super) fn new(todo: usize) -> Self {
        FailFast {
            needed: FAIL_FAST_AFTER.min(todo).max(1),
            streak: None,
            decided: false,
        }
    }

    /// Records one finished episode; returns the shared error, and whose failure it is, once the
    /// first ones all agree.
    pub(super) fn record(&mut self, view: &EpisodeView) -> Option<(String, Option<ErrorCause>)> {
        if self.decided {
            return None;
        }
        let error = view.error.clone().unwrap_or_default();
        let same = match &mut self.streak {
            _ if !view.never_reached_model() => false,
            None => {
                self.streak = Some((error, 1));
                true
            }
            Some((first, n)) if *first == error => {
                *n += 1;
                true
            }
            Some(_) => false,
        };
        if !same {
            self.decided = true;
            return None;
        }
        match &self.streak {
            Some((e, n)) if *n >= self.needed => {
                self.decided = true;
                Some((e.clone(), view.error_cause))
            }
            _ => None,
        }
    }
}

/// Stops the batch when this many episodes in a row could not reach the tool server: the queries
/// after them would only be spent against a broken environment.
pub(super) struct ToolOutage {
    streak: usize,
}

impl ToolOutage {
    pub(super) fn new() -> Self {
        ToolOutage { streak: 0 }
    }

    /// Records one finished episode; returns its error once [`FAIL_FAST_AFTER`] in a row met an
    /// unreachable tool server.
    pub(super) fn record(&mut self, view: &EpisodeView) -> Option<String> {
        if view.counters.unreachable_tool_calls == 0 {
            self.streak = 0;
            return None;
        }
        self.streak += 1;
        (self.streak >= FAIL_FAST_AFTER).then(|| view.error.clone().unwrap_or_default())
    }
}
