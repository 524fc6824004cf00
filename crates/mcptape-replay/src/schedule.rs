//! The seeded schedule (delay + fault per request), the deadline heap, and
//! the timer that carries it out.
//!
//! # The timer ([`TimerThread`])
//! One dedicated OS thread per process (`mcptape-timer`) owns a
//! [`DeadlineHeap`] of absolute `CLOCK_MONOTONIC` deadlines
//! ([`std::time::Instant`]). It sleeps on a condition variable (a futex
//! wait with an absolute monotonic timeout, hrtimer resolution plus the
//! kernel's 50 µs timer slack) until a margin before the earliest deadline
//! ([`SPIN_MARGIN_US`], widened up to [`MAX_SPIN_MARGIN_US`] when the
//! machine wakes the thread late, [`spin_margin_us`]), then spins on the monotonic clock ([`std::hint::spin_loop`])
//! to the deadline and runs the job — for `serve` over stdio, one `write(2)`
//! of the whole reply line. There is no task per request and no spin on the
//! tokio runtime: requests are read, matched and pushed onto the heap by the
//! reader; the timer thread alone waits.
//!
//! [`TimerMode::Virtual`] keeps the same heap but drives it from a tokio task
//! on tokio's (pausable) clock, so tests on a paused clock see exact virtual
//! delays and the heap's order.
//!
//! Deadlines are absolute: arrival + drawn delay ([`deadline_after`]); a
//! reply is never sent before its deadline (the spin ends on
//! `now >= deadline`). Measured accuracy: see `benches/README.md`,
//! "Replay engine precision".

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio::sync::{Notify, oneshot};
use tokio::time::{Duration, Instant};

use crate::latency::{Fault, FaultSpec, LatencyModel};

/// How long before a deadline the timer thread stops sleeping and spins on
/// the monotonic clock at least, µs (the floor of the adaptive margin,
/// [`spin_margin_us`]). Covers the futex wake-up latency (timer slack
/// 50 µs plus the scheduler's wake-up on a busy machine) at the cost of at
/// most this much CPU per deadline.
pub const SPIN_MARGIN_US: u64 = 200;

/// How the serve timer waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TimerMode {
    /// Real clock: the process's [`TimerThread`] (sleep to
    /// [`SPIN_MARGIN_US`] before the deadline, then spin; µs accuracy).
    #[default]
    Precise,
    /// tokio's timer, driven by a task over the same [`DeadlineHeap`]. For
    /// tests on a paused tokio clock, where virtual time jumps straight to
    /// each timer: exact for whole-millisecond delays, deterministic for the
    /// others (rounded up to the next ms by tokio's wheel).
    Virtual,
}

/// The absolute deadline of a reply: `arrival + delay_us` µs, saturating at
/// `arrival + 100 years` (a delay no model draws; never earlier than
/// `arrival`).
pub fn deadline_after(arrival: Instant, delay_us: u64) -> Instant {
    let d = Duration::from_micros(delay_us);
    arrival
        .checked_add(d)
        .or_else(|| arrival.checked_add(Duration::from_secs(100 * 365 * 86_400)))
        .unwrap_or(arrival)
}

/// Identifies one scheduled job (unique within its heap; from 0, in push order).
pub type Ticket = u64;

/// Jobs of earliest deadline first; jobs with the same deadline in push
/// order (FIFO). Cancelled jobs are removed from the item map at once and
/// skipped lazily in the heap. `D` is the clock's instant type
/// ([`std::time::Instant`] for the timer thread, [`tokio::time::Instant`]
/// for the virtual timer).
#[derive(Debug)]
pub struct DeadlineHeap<D: Ord + Copy, T> {
    heap: BinaryHeap<Reverse<(D, Ticket)>>,
    items: HashMap<Ticket, T>,
    next: Ticket,
}

impl<D: Ord + Copy, T> Default for DeadlineHeap<D, T> {
    fn default() -> Self {
        DeadlineHeap {
            heap: BinaryHeap::new(),
            items: HashMap::new(),
            next: 0,
        }
    }
}

impl<D: Ord + Copy, T> DeadlineHeap<D, T> {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `item` at `deadline`; returns its ticket. O(log n).
    pub fn push(&mut self, deadline: D, item: T) -> Ticket {
        let t = self.next;
        self.next += 1;
        self.heap.push(Reverse((deadline, t)));
        self.items.insert(t, item);
        t
    }

    /// Removes a job not yet popped; `None` when it already was (or never existed).
    pub fn cancel(&mut self, ticket: Ticket) -> Option<T> {
        self.items.remove(&ticket)
    }

    fn skip_cancelled(&mut self) {
        while let Some(Reverse((_, t))) = self.heap.peek() {
            if self.items.contains_key(t) {
                break;
            }
            self.heap.pop();
        }
    }

    /// The earliest deadline of a live job.
    pub fn next_deadline(&mut self) -> Option<D> {
        self.skip_cancelled();
        self.heap.peek().map(|Reverse((d, _))| *d)
    }

    /// Pops the earliest live job if its deadline is `<= now` (never early):
    /// `(deadline, ticket, item)`.
    pub fn pop_due(&mut self, now: D) -> Option<(D, Ticket, T)> {
        self.skip_cancelled();
        let Reverse((d, t)) = *self.heap.peek()?;
        if d > now {
            return None;
        }
        self.heap.pop();
        let item = self.items.remove(&t)?;
        Some((d, t, item))
    }

    /// Live (not popped, not cancelled) jobs.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No live job.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// A job the timer runs at its deadline; it gets its own ticket.
pub type Job = Box<dyn FnOnce(Ticket) + Send + 'static>;

#[derive(Default)]
struct ThreadState {
    heap: DeadlineHeap<std::time::Instant, Job>,
}

/// The process's timer thread (see the module docs). Jobs run on it, one
/// after the other, in deadline order; a job should be short (a write, a
/// channel send) — a job that blocks delays every later deadline.
pub struct TimerThread {
    state: Mutex<ThreadState>,
    wake: Condvar,
}

impl std::fmt::Debug for TimerThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimerThread").finish_non_exhaustive()
    }
}

impl TimerThread {
    /// The process-wide timer thread, started on first use with
    /// [`TimerPriority::Auto`] unless [`TimerThread::start`] ran first.
    ///
    /// # Panics
    /// When the OS refuses to start a thread at first use (out of resources).
    pub fn global() -> &'static TimerThread {
        Self::start(TimerPriority::Auto).0
    }

    /// Starts the process-wide timer thread asking the OS for `priority`,
    /// and returns it with the scheduling policy it got. Only the first call
    /// (or the first [`global`](Self::global)) chooses: later calls return
    /// the running thread and its policy, whatever they ask.
    ///
    /// # Panics
    /// When the OS refuses to start a thread (out of resources).
    pub fn start(priority: TimerPriority) -> (&'static TimerThread, &'static TimerPolicy) {
        static T: OnceLock<(&'static TimerThread, &'static TimerPolicy)> = OnceLock::new();
        *T.get_or_init(|| {
            let t: &'static TimerThread = Box::leak(Box::new(TimerThread {
                state: Mutex::new(ThreadState::default()),
                wake: Condvar::new(),
            }));
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            std::thread::Builder::new()
                .name("mcptape-timer".into())
                .spawn(move || {
                    let _ = tx.send(apply_priority(priority));
                    t.run()
                })
                .expect("starting the mcptape-timer thread");
            let policy: &'static TimerPolicy = rx.recv().unwrap_or_else(|_| {
                Box::leak(Box::new(TimerPolicy {
                    realtime: false,
                    description: "SCHED_OTHER (the timer thread did not report its policy)".into(),
                }))
            });
            (t, policy)
        })
    }

    /// The policy the running timer thread got; `None` before it started
    /// (e.g. only [`TimerMode::Virtual`] was used).
    pub fn policy() -> Option<&'static TimerPolicy> {
        POLICY.get().copied()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ThreadState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `job` at `deadline` (absolute, monotonic); returns its ticket.
    pub fn schedule(&self, deadline: std::time::Instant, job: Job) -> Ticket {
        let t = self.lock().heap.push(deadline, job);
        self.wake.notify_one();
        t
    }

    /// Cancels a job that has not started; `true` when it was removed (it
    /// will never run), `false` when it already ran or is running.
    pub fn cancel(&self, ticket: Ticket) -> bool {
        self.lock().heap.cancel(ticket).is_some()
    }

    fn run(&self) {
        // Spin margin, adapted to how late the futex wake-ups come back: a
        // decaying maximum of the observed oversleep, ×1.5, clamped to
        // [SPIN_MARGIN_US, MAX_SPIN_MARGIN_US]. On an idle machine it stays
        // at the floor; on a busy one the thread wakes earlier and spins
        // longer instead of missing the deadline.
        let mut oversleep_us = 0.0_f64;
        let mut g = self.lock();
        loop {
            let now = std::time::Instant::now();
            if let Some((_, t, job)) = g.heap.pop_due(now) {
                drop(g);
                job(t);
                g = self.lock();
                continue;
            }
            let margin = Duration::from_micros(spin_margin_us(oversleep_us));
            match g.heap.next_deadline() {
                None => g = self.wake.wait(g).unwrap_or_else(|p| p.into_inner()),
                Some(d) if d.saturating_duration_since(now) > margin => {
                    let sleep = d.saturating_duration_since(now) - margin;
                    let (g2, res) = self
                        .wake
                        .wait_timeout(g, sleep)
                        .unwrap_or_else(|p| p.into_inner());
                    g = g2;
                    if res.timed_out() {
                        let over = std::time::Instant::now()
                            .saturating_duration_since(now + sleep)
                            .as_micros() as f64;
                        oversleep_us = over.max(oversleep_us * OVERSLEEP_DECAY);
                    }
                }
                Some(d) => {
                    // Final approach: spin without the lock (an earlier
                    // deadline pushed meanwhile is at most the margin late).
                    drop(g);
                    while std::time::Instant::now() < d {
                        std::hint::spin_loop();
                    }
                    g = self.lock();
                }
            }
        }
    }
}

/// What the `mcptape-timer` thread asks the OS for (`serve --timer-priority`).
///
/// A real-time policy keeps the thread from being preempted by the bench
/// client and the reader on a 2-core machine: measured in
/// `benches/README.md` ("Replay engine precision"), the lateness p99 of
/// `fixed:12ms` and of the seeds' lognormal drops below 0.2 ms with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TimerPriority {
    /// Ask for `SCHED_FIFO` at its lowest real-time priority (1, below every
    /// kernel real-time thread); keep the normal policy when the OS refuses
    /// (no `CAP_SYS_NICE`, `RLIMIT_RTPRIO` 0). The default. The final spin
    /// is bounded by [`MAX_SPIN_MARGIN_US`] per deadline and the kernel's
    /// real-time throttling keeps 5 % of each core for other threads.
    #[default]
    Auto,
    /// `SCHED_FIFO` priority 1, or the caller refuses to run
    /// ([`TimerPolicy::realtime`] is `false`).
    Realtime,
    /// Keep the normal policy (`SCHED_OTHER`).
    Normal,
}

/// The scheduling policy the timer thread runs under, as reported in
/// `serve --stats` (`timerPolicy`) and the bench report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimerPolicy {
    /// `true` under `SCHED_FIFO`.
    pub realtime: bool,
    /// `SCHED_FIFO priority 1`, or `SCHED_OTHER (…why…)`.
    pub description: String,
}

static POLICY: OnceLock<&'static TimerPolicy> = OnceLock::new();

/// Applies `p` to the calling thread and says what it got.
fn apply_priority(p: TimerPriority) -> &'static TimerPolicy {
    let got = match p {
        TimerPriority::Normal => TimerPolicy {
            realtime: false,
            description: "SCHED_OTHER (--timer-priority normal)".into(),
        },
        TimerPriority::Auto | TimerPriority::Realtime => {
            use thread_priority::{
                RealtimeThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
                set_thread_priority_and_policy, thread_native_id,
            };
            match set_thread_priority_and_policy(
                thread_native_id(),
                ThreadPriority::Min,
                ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
            ) {
                Ok(()) => TimerPolicy {
                    realtime: true,
                    description: "SCHED_FIFO priority 1".into(),
                },
                Err(e) => TimerPolicy {
                    realtime: false,
                    description: format!("SCHED_OTHER (SCHED_FIFO refused: {e})"),
                },
            }
        }
    };
    POLICY.get_or_init(|| Box::leak(Box::new(got)))
}

/// Largest spin margin of the adaptive timer thread, µs (1 ms): bounds the
/// CPU the final spin may burn per deadline on a busy machine.
pub const MAX_SPIN_MARGIN_US: u64 = 1_000;

/// Per timed wait, the remembered oversleep decays by this factor (a
/// late wake-up is forgotten over ~100 waits).
const OVERSLEEP_DECAY: f64 = 0.98;

/// The spin margin for a remembered oversleep of `oversleep_us` µs:
/// 1.5 × it, within [`SPIN_MARGIN_US`, `MAX_SPIN_MARGIN_US`].
pub fn spin_margin_us(oversleep_us: f64) -> u64 {
    ((oversleep_us * 1.5) as u64).clamp(SPIN_MARGIN_US, MAX_SPIN_MARGIN_US)
}

/// The [`TimerMode::Virtual`] timer: a [`DeadlineHeap`] driven by one tokio
/// task on tokio's clock (paused in tests). Jobs run on that task in
/// deadline order, ties FIFO. Dropping the timer stops the task.
pub struct VirtualTimer {
    heap: Arc<Mutex<DeadlineHeap<Instant, Job>>>,
    notify: Arc<Notify>,
    task: tokio::task::AbortHandle,
}

impl std::fmt::Debug for VirtualTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualTimer").finish_non_exhaustive()
    }
}

impl VirtualTimer {
    /// Starts the driving task on the current tokio runtime.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn start() -> VirtualTimer {
        let heap: Arc<Mutex<DeadlineHeap<Instant, Job>>> = Arc::default();
        let notify = Arc::new(Notify::new());
        let (h, n) = (heap.clone(), notify.clone());
        let task = tokio::spawn(async move {
            loop {
                let mut due = Vec::new();
                let next = {
                    let mut g = h.lock().unwrap_or_else(|p| p.into_inner());
                    let now = Instant::now();
                    while let Some((_, t, job)) = g.pop_due(now) {
                        due.push((t, job));
                    }
                    g.next_deadline()
                };
                let ran = !due.is_empty();
                for (t, job) in due {
                    job(t);
                }
                if ran {
                    continue;
                }
                match next {
                    Some(d) => {
                        tokio::select! {
                            _ = tokio::time::sleep_until(d) => {}
                            _ = n.notified() => {}
                        }
                    }
                    None => n.notified().await,
                }
            }
        })
        .abort_handle();
        VirtualTimer { heap, notify, task }
    }

    /// Runs `job` at `deadline` on tokio's clock; returns its ticket.
    pub fn schedule(&self, deadline: Instant, job: Job) -> Ticket {
        let t = self
            .heap
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(deadline, job);
        self.notify.notify_one();
        t
    }

    /// Cancels a job that has not run; `true` when removed.
    pub fn cancel(&self, ticket: Ticket) -> bool {
        self.heap
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .cancel(ticket)
            .is_some()
    }
}

impl Drop for VirtualTimer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The timer of one serve session: the process's [`TimerThread`]
/// ([`TimerMode::Precise`]) or a [`VirtualTimer`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Timer {
    /// The process's timer thread.
    Thread(&'static TimerThread),
    /// A tokio-clock timer (tests on a paused clock).
    Virtual(VirtualTimer),
}

impl Timer {
    /// The timer for `mode` ([`TimerMode::Virtual`] needs a tokio runtime).
    pub fn for_mode(mode: TimerMode) -> Timer {
        match mode {
            TimerMode::Precise => Timer::Thread(TimerThread::global()),
            TimerMode::Virtual => Timer::Virtual(VirtualTimer::start()),
        }
    }

    /// Runs `job` at `deadline`; returns its ticket.
    pub fn schedule(&self, deadline: Instant, job: Job) -> Ticket {
        match self {
            Timer::Thread(t) => t.schedule(deadline.into_std(), job),
            Timer::Virtual(v) => v.schedule(deadline, job),
        }
    }

    /// Cancels a job that has not started; `true` when it will never run.
    pub fn cancel(&self, ticket: Ticket) -> bool {
        match self {
            Timer::Thread(t) => t.cancel(ticket),
            Timer::Virtual(v) => v.cancel(ticket),
        }
    }
}

/// Waits until `deadline`, never returning before it.
/// [`TimerMode::Precise`]: a job on the [`TimerThread`] completes a oneshot
/// (the thread's accuracy plus one tokio wake-up; no spin on the runtime);
/// dropping the future cancels the job. [`TimerMode::Virtual`]:
/// `tokio::time::sleep_until`.
pub async fn sleep_until_precise(deadline: Instant, mode: TimerMode) {
    if mode == TimerMode::Virtual {
        tokio::time::sleep_until(deadline).await;
        return;
    }
    if deadline <= Instant::now() {
        return;
    }
    struct CancelOnDrop(Option<Ticket>);
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            if let Some(t) = self.0 {
                TimerThread::global().cancel(t);
            }
        }
    }
    let (tx, rx) = oneshot::channel::<()>();
    let t = TimerThread::global().schedule(
        deadline.into_std(),
        Box::new(move |_| {
            let _ = tx.send(());
        }),
    );
    let mut guard = CancelOnDrop(Some(t));
    let _ = rx.await;
    guard.0 = None;
    // The oneshot completes at the deadline; a dropped sender cannot happen
    // (the job owns it), but never return early either way.
    if Instant::now() < deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

/// What the schedule decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Index of the request in arrival order, from 0.
    pub seq: u64,
    /// Server-side delay before the answer, µs.
    pub delay_us: u64,
    /// Injected fault, if any.
    pub fault: Option<Fault>,
}

/// Seeded schedule: the same seed and the same sequence of requests give the
/// same [`Plan`]s. Each request consumes one draw for the fault, then the
/// model's draw(s) for the delay.
#[derive(Debug)]
pub struct Scheduler {
    rng: StdRng,
    model: LatencyModel,
    faults: FaultSpec,
    seq: u64,
}

impl Scheduler {
    /// A schedule for `model` and `faults` seeded with `seed`.
    pub fn new(model: LatencyModel, faults: FaultSpec, seed: u64) -> Scheduler {
        Scheduler {
            rng: StdRng::seed_from_u64(seed),
            model,
            faults,
            seq: 0,
        }
    }

    /// The model in use.
    pub fn model(&self) -> &LatencyModel {
        &self.model
    }

    /// Plans the next request; `recorded_us` is its recorded server delay.
    pub fn plan(&mut self, recorded_us: Option<u64>) -> Plan {
        self.plan_for(recorded_us, None)
    }

    /// [`plan`](Self::plan) for a request of `method` (the model may have a distribution of
    /// its own for it: [`LatencyModel::sample_us_for`]).
    pub fn plan_for(&mut self, recorded_us: Option<u64>, method: Option<&str>) -> Plan {
        let u: u32 = self.rng.random_range(0..1_000_000);
        let fault = self.faults.pick(u);
        let delay_us = self.model.sample_us_for(&mut self.rng, recorded_us, method);
        let seq = self.seq;
        self.seq += 1;
        Plan {
            seq,
            delay_us,
            fault,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_schedule_other_seed_other_schedule() {
        let model = LatencyModel::parse("lognormal:p50=12ms,p99=40ms").unwrap();
        let faults = FaultSpec::parse("stall=5%,error=-32603@5%").unwrap();
        let run = |seed| {
            let mut s = Scheduler::new(model.clone(), faults.clone(), seed);
            (0..500).map(|_| s.plan(None)).collect::<Vec<_>>()
        };
        let a = run(42);
        assert_eq!(a, run(42));
        assert_ne!(a, run(43));
        let stalls = a.iter().filter(|p| p.fault == Some(Fault::Stall)).count();
        assert!((10..=45).contains(&stalls), "{stalls} stalls in 500 at 5%");
    }

    #[test]
    fn spin_margin_follows_the_oversleep_within_its_bounds() {
        assert_eq!(spin_margin_us(0.0), SPIN_MARGIN_US);
        assert_eq!(spin_margin_us(400.0), 600);
        assert_eq!(spin_margin_us(666.0), 999);
        assert_eq!(spin_margin_us(667.0), MAX_SPIN_MARGIN_US);
        assert_eq!(spin_margin_us(1e9), MAX_SPIN_MARGIN_US);
    }

    #[tokio::test(start_paused = true)]
    async fn virtual_sleep_ends_at_the_deadline_under_a_paused_clock() {
        let start = Instant::now();
        sleep_until_precise(start + Duration::from_millis(12), TimerMode::Virtual).await;
        assert_eq!(Instant::now() - start, Duration::from_millis(12));
    }

    #[tokio::test]
    async fn precise_sleep_is_never_early() {
        for us in [300u64, 2_000, 12_345] {
            let start = Instant::now();
            sleep_until_precise(start + Duration::from_micros(us), TimerMode::Precise).await;
            assert!(Instant::now() - start >= Duration::from_micros(us));
        }
    }
}
