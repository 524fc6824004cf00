//! The seeded schedule (delay + fault per request) and the precise sleep
//! that carries it out.
//!
//! Accuracy: tokio's timer wheel has 1 ms granularity and rounds deadlines up
//! to the next tick, which alone would add ~0.5 ms on average to a 12 ms
//! median. [`sleep_until_precise`] therefore sleeps on the timer only until
//! [`SPIN_MARGIN_US`] before the deadline, then yields in a loop reading the
//! monotonic clock (`CLOCK_MONOTONIC`, ns resolution) until the deadline has
//! passed. The achieved delay is measured by `serve` and shown by `bench`
//! beside the model's quantiles.
//!
//! Achieved accuracy (release build, `mcptape bench` on
//! `corpus/transcripts/everything-stdio.jsonl`, 1,501 replies per run, measured
//! from the request line read to the reply written and flushed, on a 2-core
//! machine shared with other builds at load average 8–9): `fixed:12ms` —
//! achieved p50 12.439 ms, p99 19.839 ms (lateness p50 0.435 ms, p99 7.8 ms);
//! `lognormal:p50=12ms,p99=40ms` — drawn p50 11.703 / p99 42.591 ms, achieved
//! p50 12.103 / p99 42.975 ms (lateness p50 0.208 ms, p99 2.5 ms). The
//! lateness tail is the OS scheduler under that load (the spin needs a CPU),
//! not the timer; it is never early.

use rand::{Rng, SeedableRng, rngs::StdRng};
use tokio::time::{Duration, Instant};

use crate::latency::{Fault, FaultSpec, LatencyModel};

/// How long before a deadline [`sleep_until_precise`] stops using the 1 ms
/// timer and starts yielding on the monotonic clock, µs.
pub const SPIN_MARGIN_US: u64 = 1_500;

/// How [`sleep_until_precise`] waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TimerMode {
    /// Real clock: timer sleep to [`SPIN_MARGIN_US`] before the deadline,
    /// then yield-and-check on the monotonic clock (sub-ms accuracy).
    #[default]
    Precise,
    /// Plain tokio timer (1 ms ticks). For tests on a paused tokio clock,
    /// where virtual time jumps straight to each timer and a spin would only
    /// race real time: exact for whole-millisecond delays, deterministic for
    /// the others (rounded up to the next ms).
    Virtual,
}

/// Waits until `deadline`. [`TimerMode::Precise`]: timer sleep to
/// [`SPIN_MARGIN_US`] before it, then yield-and-check on the monotonic clock
/// until it has passed. [`TimerMode::Virtual`]: `tokio::time::sleep_until`.
pub async fn sleep_until_precise(deadline: Instant, mode: TimerMode) {
    if mode == TimerMode::Virtual {
        tokio::time::sleep_until(deadline).await;
        return;
    }
    let margin = Duration::from_micros(SPIN_MARGIN_US);
    if let Some(coarse) = deadline.checked_sub(margin)
        && coarse > Instant::now()
    {
        tokio::time::sleep_until(coarse).await;
    }
    while Instant::now() < deadline {
        tokio::task::yield_now().await;
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
        let u: u32 = self.rng.random_range(0..1_000_000);
        let fault = self.faults.pick(u);
        let delay_us = self.model.sample_us(&mut self.rng, recorded_us);
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
