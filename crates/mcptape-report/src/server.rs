//! What the embedded recorded server (`mcptape serve --stats`) reports about its own run,
//! as a bench report carries it ([`BenchReport::server`](crate::stats::BenchReport::server)):
//! its counters, the scheduled and achieved delays, the engine's capacity and the
//! [`Precision`] verdict.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::Quantiles;

/// Lateness p99 allowed before a run is flagged, as a share of the model's
/// p50 (2 %); see [`Precision`].
pub const PRECISION_SHARE_OF_P50: f64 = 0.02;

/// Lateness p99 allowed before a run is flagged, on top of the share, µs
/// (0.2 ms); see [`Precision`].
pub const PRECISION_FLOOR_US: f64 = 200.0;

/// Whether the replay's own timing error is small against the model: the
/// run is flagged (`machine_bound`) when lateness (achieved − scheduled)
/// p99 exceeds [`PRECISION_SHARE_OF_P50`] × the model's p50 +
/// [`PRECISION_FLOOR_US`]. A flagged run's figures measure the machine
/// (scheduler, load), not the server the model describes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Precision {
    /// The limit on lateness p99, µs.
    pub limit_us: f64,
    /// Lateness p99 measured, µs.
    pub lateness_p99_us: u64,
    /// Lateness p99 above the limit: the figures measure the machine, not the server.
    pub machine_bound: bool,
}

impl Precision {
    /// The verdict for a model with median `model_p50_us` (µs) and a
    /// measured lateness p99 (µs). No replies (`count == 0`): not flagged.
    pub fn judge(model_p50_us: f64, lateness_p99_us: u64, count: u64) -> Precision {
        let limit_us = PRECISION_SHARE_OF_P50 * model_p50_us.max(0.0) + PRECISION_FLOOR_US;
        Precision {
            limit_us,
            lateness_p99_us,
            machine_bound: count > 0 && lateness_p99_us as f64 > limit_us,
        }
    }

    /// The human flag line, when flagged.
    pub fn note(&self) -> Option<String> {
        self.machine_bound.then(|| {
            format!(
                "FLAGGED: replay lateness p99 {:.3} ms exceeds {:.3} ms (2 % of the model's p50 + 0.2 ms): the figures measure the machine, not the server",
                self.lateness_p99_us as f64 / 1000.0,
                self.limit_us / 1000.0
            )
        })
    }
}

/// The JSON summary `serve --stats FILE` writes on exit (read by `bench`).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServeSummary {
    /// Latency model spec.
    pub model: String,
    /// The model's analytic p50, µs (if it has one).
    pub model_p50_us: Option<f64>,
    /// The model's analytic p99, µs.
    pub model_p99_us: Option<f64>,
    /// Requests received.
    pub requests: u64,
    /// Requests answered from the recording.
    pub matched: u64,
    /// Requests that matched no recording.
    pub unmatched: u64,
    /// Rejected `resources/read` uris.
    pub rejected_uri: u64,
    /// Answers cancelled before they were sent.
    pub cancelled: u64,
    /// Stall faults.
    pub stalled: u64,
    /// Error faults.
    pub injected_errors: u64,
    /// Drop-connection faults.
    pub dropped: u64,
    /// Requests answered with the recording's own crash (`mcptape_replay::serve::Answer::Crash`).
    #[serde(default)]
    pub crashed: u64,
    /// Messages refused by the strict JSON-RPC parser (answered -32700/-32600).
    #[serde(default)]
    pub invalid: u64,
    /// `ping` requests answered `{}` without a recorded answer.
    #[serde(default)]
    pub pinged: u64,
    /// Answers synthesized for requests the recording has no answer for, per
    /// method (`ping`, `logging/setLevel`, empty list pages, not-found reads,
    /// adapted handshakes: `mcptape_replay::serve::Unrecorded`).
    #[serde(default)]
    pub synthesized: BTreeMap<String, u64>,
    /// Handshakes of the other protocol era answered from the recorded one
    /// (`initialize` on a 2026-07-28 recording, `server/discover` on a 2025 one).
    #[serde(default)]
    pub adapted: u64,
    /// Replies of 1 MiB or more moved from the mapped transcript into the stdout pipe by
    /// `splice(2)` (`mcptape_replay::serve::LineWrite::Spliced`).
    #[serde(default)]
    pub spliced: u64,
    /// Replies whose `splice(2)` was refused and that were written from the map instead (the
    /// same bytes, a copy more), per reason: `EINVAL` (stdout is not a pipe: a file,
    /// `/dev/null`), `ENOSYS`, `EAGAIN`, `file ended early`.
    #[serde(default)]
    pub splice_fallbacks: BTreeMap<String, u64>,
    /// Refused requests to grow the stdout pipe to 1 MiB (`fcntl(F_SETPIPE_SZ)`), per `errno`
    /// name: `EPERM` (the user's pipe quota), `EBUSY`. The pipe keeps its size (64 KiB by
    /// default): a slow client blocks the timer thread's writes sooner.
    #[serde(default)]
    pub pipe_size_refused: BTreeMap<String, u64>,
    /// Recorded JSON-RPC batches (message records that are a JSON array; MCP 2025-03-26 only)
    /// skipped when the transcript was loaded, never served: a count of batches
    /// (`mcptape_replay::tape::Tape::batches_skipped`). A client that sends such a batch is
    /// refused (-32600), as any batch is.
    #[serde(default)]
    pub batches_skipped: u64,
    /// Scheduled delays, µs.
    pub intended: Quantiles,
    /// Achieved delays, µs.
    pub achieved: Quantiles,
    /// Achieved − scheduled, µs (the timer's accuracy).
    pub lateness: Quantiles,
    /// Engine time of zero-delay replies (line read → reply written), µs.
    #[serde(default)]
    pub engine: Quantiles,
    /// Engine work per reply (match + encode + write, the wait excluded), µs.
    #[serde(default)]
    pub work: Quantiles,
    /// The engine's capacity estimate, replies/s on one core: 10⁶ / mean
    /// [`work`](Self::work) µs. Offered load beyond it queues in the engine,
    /// and then the engine, not the model, sets the latency.
    #[serde(default)]
    pub capacity_per_s: Option<f64>,
    /// Lateness against the model ([`Precision`]).
    #[serde(default)]
    pub precision: Precision,
    /// The scheduling policy of the timer thread that wrote the delayed
    /// replies (`SCHED_FIFO priority 1`, or `SCHED_OTHER (…why…)`;
    /// `mcptape_replay::schedule::TimerPriority`); `None` when no reply waited on it.
    #[serde(default)]
    pub timer_policy: Option<String>,
}

/// Share of [`ServeSummary::capacity_per_s`] at which a run's throughput
/// counts as engine-bound (80 %).
pub const ENGINE_BOUND_SHARE: f64 = 0.8;

impl ServeSummary {
    /// Answers synthesized for unrecorded requests, all methods (the sum of
    /// [`synthesized`](Self::synthesized); adapted handshakes and unrecorded pings included).
    pub fn synthesized_total(&self) -> u64 {
        self.synthesized.values().sum()
    }

    /// How the requests the server received ended, each counted once, as (name, count):
    /// matched, synthesized ([`synthesized_total`](Self::synthesized_total)), unmatched,
    /// rejected uri, invalid, crashed, stalled, injected errors, dropped. Their sum is
    /// [`requests`](Self::requests).
    pub fn request_parts(&self) -> [(&'static str, u64); 9] {
        [
            ("matched", self.matched),
            ("synthesized", self.synthesized_total()),
            ("unmatched", self.unmatched),
            ("rejected uri", self.rejected_uri),
            ("invalid", self.invalid),
            ("crashed", self.crashed),
            ("stalled", self.stalled),
            ("injected errors", self.injected_errors),
            ("dropped", self.dropped),
        ]
    }

    /// [`request_parts`](Self::request_parts) as one line: `requests 41 = matched 39 +
    /// synthesized 2 + unmatched 0 + rejected uri 0 + invalid 0 + crashed 0 + stalled 0 +
    /// injected errors 0 + dropped 0; cancelled 0` (`cancelled`: answers of those, of any kind,
    /// not sent because the client cancelled). Not wrapped: the table wraps it at its width;
    /// the HTML report prints it as it is.
    pub fn requests_line(&self) -> String {
        let parts: Vec<String> = self
            .request_parts()
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        format!(
            "requests {} = {}; cancelled {}",
            self.requests,
            parts.join(" + "),
            self.cancelled
        )
    }

    /// `synthesized (not recorded): ping 2, logging/setLevel 1; adapted handshakes: 1`,
    /// when any answer was synthesized.
    pub fn synthesized_note(&self) -> Option<String> {
        if self.synthesized.is_empty() && self.adapted == 0 {
            return None;
        }
        let list: Vec<String> = self
            .synthesized
            .iter()
            .map(|(m, n)| format!("{m} {n}"))
            .collect();
        Some(format!(
            "synthesized (not recorded): {}; adapted handshakes: {}",
            if list.is_empty() {
                "none".to_owned()
            } else {
                list.join(", ")
            },
            self.adapted
        ))
    }

    /// `stdout pipe not grown to 1 MiB (F_SETPIPE_SZ refused: EPERM 1); splice refused, written
    /// instead: EINVAL 3 (of 3 replies of 1 MiB or more)`, when either happened; `None` when
    /// every pipe grew and every long reply was spliced (or none was long).
    pub fn io_note(&self) -> Option<String> {
        let list = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.pipe_size_refused.is_empty() {
            parts.push(format!(
                "stdout pipe not grown to 1 MiB (F_SETPIPE_SZ refused: {})",
                list(&self.pipe_size_refused)
            ));
        }
        if !self.splice_fallbacks.is_empty() {
            let fell: u64 = self.splice_fallbacks.values().sum();
            parts.push(format!(
                "splice refused, written instead: {} (of {} replies of 1 MiB or more)",
                list(&self.splice_fallbacks),
                fell + self.spliced
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The lines `bench` prints under the server-side delay table: engine
    /// time (zero-delay replies, read → written), engine work and capacity,
    /// the [`Precision`] flag, and — when `throughput_per_s` (replies/s the
    /// client got) reaches [`ENGINE_BOUND_SHARE`] of the capacity — that the
    /// engine, not the model, set the latency. One line per element, not
    /// wrapped (no `\n`; the FLAGGED and ENGINE-BOUND lines run past 80
    /// columns): the table wraps them at its width.
    pub fn precision_lines(&self, throughput_per_s: f64) -> Vec<String> {
        let ms = |us: u64| format!("{:.3} ms", us as f64 / 1000.0);
        let mut out: Vec<String> = self.synthesized_note().into_iter().collect();
        out.extend(self.io_note());
        if self.engine.count > 0 {
            out.push(format!(
                "engine time (line read -> reply written, {} zero-delay replies): p50 {}  p99 {}  max {}",
                self.engine.count,
                ms(self.engine.p50_us),
                ms(self.engine.p99_us),
                ms(self.engine.max_us)
            ));
        }
        if let Some(cap) = self.capacity_per_s {
            out.push(format!(
                "engine work per reply (match + encode + write): p50 {}  p99 {}",
                ms(self.work.p50_us),
                ms(self.work.p99_us)
            ));
            out.push(format!("engine capacity ~{cap:.0} replies/s"));
            if throughput_per_s > 0.0 && throughput_per_s >= ENGINE_BOUND_SHARE * cap {
                out.push(format!(
                    "ENGINE-BOUND: {throughput_per_s:.0} replies/s is at least {:.0} % of the engine's capacity: the engine, not the model, set the latency",
                    ENGINE_BOUND_SHARE * 100.0
                ));
            }
        }
        if let Some(p) = &self.timer_policy {
            out.push(format!("timer thread: {p}"));
        }
        out.push(match self.precision.note() {
            Some(n) => n,
            None => format!(
                "precision ok: lateness p99 {} <= {:.3} ms (2 % of model p50 + 0.2 ms)",
                ms(self.precision.lateness_p99_us),
                self.precision.limit_us / 1000.0
            ),
        });
        out
    }
}
