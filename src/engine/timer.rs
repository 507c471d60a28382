//! Waiting for an operation's scheduled start, to a few microseconds.
//!
//! tokio's timer counts whole milliseconds and rounds up, so a connection woke 1.3–1.5 ms
//! after its slot and the open model charged that lag to the server. Here one thread keeps
//! every pending deadline in a heap, sleeps until the earliest with the kernel's timer
//! slack cut to a nanosecond, and wakes the tasks that are due. It sleeps, never spins:
//! its cost is one wake-up per operation, a small share of a core at 10,000 operations/s
//! (docs/PERFORMANCE.md has the figures).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::thread::Thread;
use std::time::Instant;

/// A task waiting for `at`; `order` keeps equal deadlines first come, first served.
struct Entry {
    at: Instant,
    order: u64,
    waker: Waker,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        (self.at, self.order) == (other.at, other.order)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

#[derive(Default)]
struct Deadlines {
    heap: BinaryHeap<Reverse<Entry>>,
    added: u64,
}

struct Timer {
    deadlines: Mutex<Deadlines>,
    thread: Thread,
}

/// The one timer thread of the process, started on first use; it parks when idle.
fn timer() -> &'static Timer {
    static TIMER: OnceLock<Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let thread = std::thread::Builder::new()
            .name("sofabench-timer".to_string())
            .spawn(run)
            .expect("the operating system starts a thread")
            .thread()
            .clone();
        Timer {
            deadlines: Mutex::new(Deadlines::default()),
            thread,
        }
    })
}

impl Timer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Deadlines> {
        self.deadlines.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn add(&self, at: Instant, waker: Waker) {
        let earliest = {
            let mut deadlines = self.lock();
            let order = deadlines.added;
            deadlines.added = order.wrapping_add(1);
            let earliest = deadlines.heap.peek().is_none_or(|Reverse(e)| at < e.at);
            deadlines.heap.push(Reverse(Entry { at, order, waker }));
            earliest
        };
        // The thread sleeps until the deadline that was earliest; a new earliest one
        // needs it to look again.
        if earliest {
            self.thread.unpark();
        }
    }

    /// Takes the due entries' wakers into `due`; returns the next deadline, if any.
    fn take_due(&self, now: Instant, due: &mut Vec<Waker>) -> Option<Instant> {
        let mut deadlines = self.lock();
        while let Some(Reverse(entry)) = deadlines.heap.peek() {
            if entry.at > now {
                return Some(entry.at);
            }
            if let Some(Reverse(entry)) = deadlines.heap.pop() {
                due.push(entry.waker);
            }
        }
        None
    }
}

/// The timer thread: wakes the tasks that are due, then sleeps until the next deadline.
fn run() {
    precise_sleeps();
    let timer = timer();
    let mut due = Vec::new();
    loop {
        let next = timer.take_due(Instant::now(), &mut due);
        // Wakers are called outside the lock: waking schedules the task, which may
        // register its next deadline at once.
        due.drain(..).for_each(Waker::wake);
        match next {
            Some(at) => std::thread::park_timeout(at.saturating_duration_since(Instant::now())),
            None => std::thread::park(),
        }
    }
}

/// The kernel may delay a sleeping thread's wake-up by its timer slack, 50 µs by
/// default, to batch wake-ups; this thread exists to wake on time.
#[cfg(target_os = "linux")]
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long and only affects this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

#[cfg(not(target_os = "linux"))]
fn precise_sleeps() {}

/// Resolves at `at`, to within the operating system's wake-up latency.
pub fn sleep_until(at: Instant) -> SleepUntil {
    SleepUntil { at, waker: None }
}

pub struct SleepUntil {
    at: Instant,
    /// The waker the timer holds, once registered.
    waker: Option<Waker>,
}

impl Future for SleepUntil {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            return Poll::Ready(());
        }
        // Registered once per task: a poll for another reason (the stop signal beside it)
        // needs no second entry, unless the task's waker changed.
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            let waker = cx.waker().clone();
            timer().add(self.at, waker.clone());
            self.waker = Some(waker);
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wakes_at_the_deadline_and_keeps_order() {
        let start = Instant::now();
        let later = sleep_until(start + Duration::from_millis(20));
        let sooner = sleep_until(start + Duration::from_millis(5));
        let first = tokio::select! {
            () = later => 20,
            () = sooner => 5,
        };
        assert_eq!(first, 5);
        assert!(start.elapsed() >= Duration::from_millis(5));
        sleep_until(start + Duration::from_millis(20)).await;
        assert!(start.elapsed() >= Duration::from_millis(20));
    }
}
