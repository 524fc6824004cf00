//! The k6 script (JavaScript, k6 ≥ 1.0 API: `k6/http`, `k6/execution`,
//! `k6/metrics`) that replays a [`Plan`].
//!
//! What the script does, per VU (one VU = one MCP client):
//! 1. the handshake as recorded, once (again after a failure or a `404` for
//!    an expired 2025-era session): `initialize` + `notifications/initialized`
//!    keeping `Mcp-Session-Id` and the negotiated `MCP-Protocol-Version`, or
//!    the stateless 2026-07-28 `server/discover` with `_meta` and the
//!    `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers;
//! 2. scenario `reads` (`exec: singleRead`): one recorded `resources/read`
//!    per iteration, cycling, with a fresh JSON-RPC id, timeout `--timeout`;
//! 3. scenario `turns` (`exec: turn`): `--parallel` reads at once through
//!    `http.batch`, each with timeout `--deadline`.
//!
//! Both scenarios are open-model `constant-arrival-rate` (k6 docs ›
//! Scenarios › Executors); k6's own `--vus`/`--iterations`/`--duration`
//! replace them with the default function (a read, then a turn). Answers are
//! taken from a JSON body or from the `data:` lines of a `text/event-stream`
//! body (MCP Streamable HTTP; WHATWG HTML › Server-sent events).

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{ExportError, ExportErrorKind};
use crate::k6::plan::{Era, Plan, Step};
use crate::k6::slo::Thresholds;

/// Most reads per turn (the same bound as `mcptape bench --parallel`).
pub const MAX_PARALLEL: u32 = mcptape_report::run::MAX_PARALLEL;
/// Highest arrival rate, per second (the same bound as `mcptape bench --rate`).
pub const MAX_RATE_PER_S: f64 = 1_000_000.0;
/// Longest scenario duration, s (an hour; k6-operator runs longer tests as several).
pub const MAX_DURATION_S: u64 = 3600;
/// Most VUs one scenario may allocate.
pub const MAX_VUS: u32 = 100_000;

/// How the script loads the target.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptOptions {
    /// The transcript's name, written in the script and in its `mcp_plan` point.
    pub transcript: String,
    /// Reads per turn, 1..=[`MAX_PARALLEL`].
    pub parallel: u32,
    /// Turn deadline (per-request timeout of a turn's reads), µs, > 0.
    pub deadline_us: u64,
    /// Single-read and handshake timeout, µs, > 0.
    pub timeout_us: u64,
    /// Single reads per second (scenario `reads`), in (0, [`MAX_RATE_PER_S`]].
    pub rate_per_s: f64,
    /// Turns per second (scenario `turns`), in [0, [`MAX_RATE_PER_S`]]; 0: no turn scenario.
    pub turn_rate_per_s: f64,
    /// Duration of each scenario, s, 1..=[`MAX_DURATION_S`].
    pub duration_s: u64,
    /// VUs allocated before the start, per scenario, 1..=`max_vus`.
    pub pre_allocated_vus: u32,
    /// Most VUs per scenario, 1..=[`MAX_VUS`].
    pub max_vus: u32,
    /// k6 thresholds (from [`crate::k6::slo::thresholds`]).
    pub thresholds: Thresholds,
}

impl Default for ScriptOptions {
    /// `bench`'s defaults: 4 reads per turn, 800 ms deadline, 5 s timeout;
    /// 20 reads/s and 5 turns/s for 30 s, 10 to 100 VUs.
    fn default() -> Self {
        ScriptOptions {
            transcript: String::new(),
            parallel: 4,
            deadline_us: 800_000,
            timeout_us: 5_000_000,
            rate_per_s: 20.0,
            turn_rate_per_s: 5.0,
            duration_s: 30,
            pre_allocated_vus: 10,
            max_vus: 100,
            thresholds: Thresholds::new(),
        }
    }
}

fn bad_flag(flag: &'static str, value: impl ToString, reason: impl Into<String>) -> ExportError {
    ExportError::new(ExportErrorKind::BadFlag {
        flag,
        value: value.to_string(),
        reason: reason.into(),
    })
}

impl ScriptOptions {
    /// Checks every bound.
    ///
    /// # Errors
    /// [`ExportErrorKind::BadFlag`] naming the flag, the value and the limit.
    pub fn validate(&self) -> Result<(), ExportError> {
        if !(1..=MAX_PARALLEL).contains(&self.parallel) {
            return Err(bad_flag(
                "--parallel",
                self.parallel,
                format!("must be 1..={MAX_PARALLEL}"),
            ));
        }
        if self.deadline_us == 0 {
            return Err(bad_flag("--deadline", "0", "must be longer than 0"));
        }
        if self.timeout_us == 0 {
            return Err(bad_flag("--timeout", "0", "must be longer than 0"));
        }
        if !(self.rate_per_s.is_finite()
            && self.rate_per_s > 0.0
            && self.rate_per_s <= MAX_RATE_PER_S)
        {
            return Err(bad_flag(
                "--rate",
                self.rate_per_s,
                format!("must be in (0, {MAX_RATE_PER_S}]/s"),
            ));
        }
        if !(self.turn_rate_per_s.is_finite()
            && self.turn_rate_per_s >= 0.0
            && self.turn_rate_per_s <= MAX_RATE_PER_S)
        {
            return Err(bad_flag(
                "--turn-rate",
                self.turn_rate_per_s,
                format!("must be in [0, {MAX_RATE_PER_S}]/s"),
            ));
        }
        if !(1..=MAX_DURATION_S).contains(&self.duration_s) {
            return Err(bad_flag(
                "--duration",
                format!("{}s", self.duration_s),
                format!("must be 1s..={MAX_DURATION_S}s"),
            ));
        }
        if !(1..=MAX_VUS).contains(&self.max_vus) {
            return Err(bad_flag(
                "--max-vus",
                self.max_vus,
                format!("must be 1..={MAX_VUS}"),
            ));
        }
        if !(1..=self.max_vus).contains(&self.pre_allocated_vus) {
            return Err(bad_flag(
                "--pre-vus",
                self.pre_allocated_vus,
                format!("must be 1..=--max-vus ({})", self.max_vus),
            ));
        }
        Ok(())
    }
}

/// `us` as a k6 duration string in ms (`800ms`, `0.5ms`).
fn k6_ms(us: u64) -> String {
    format!("{}ms", ms_num(us))
}

fn ms_num(us: u64) -> String {
    if us.is_multiple_of(1000) {
        (us / 1000).to_string()
    } else {
        format!("{:.3}", us as f64 / 1000.0)
    }
}

/// A k6 `(rate, timeUnit)` for `per_s` arrivals per second (k6 rates are integers).
fn k6_rate(per_s: f64) -> (u64, &'static str) {
    if per_s.fract() == 0.0 {
        (per_s as u64, "1s")
    } else {
        ((per_s * 1000.0).round().max(1.0) as u64, "1000s")
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScriptPlan<'a> {
    transcript: &'a str,
    url: &'a str,
    era: Era,
    protocol_version: &'a str,
    parallel: u32,
    turns: bool,
    deadline: String,
    deadline_ms: f64,
    timeout: String,
    timeout_ms: f64,
    load: String,
    handshake: &'a [Step],
    reads: &'a [Step],
    /// Every recorded request but the handshake: the single requests' recorded mix.
    requests: &'a [Step],
    /// The recorded mix, `METHOD=N,…` (requests per cycle), for `mcptape import k6`.
    mix: String,
}

/// JSON as a JavaScript expression: JSON is JavaScript (ES2019) except that
/// U+2028/U+2029 are escaped anyway for older parsers.
fn js(v: &impl Serialize) -> Result<String, ExportError> {
    let s = serde_json::to_string_pretty(v)
        .map_err(|e| ExportError::new(ExportErrorKind::Report(e.to_string())))?;
    Ok(s.replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029"))
}

/// The k6 script for `plan`.
///
/// # Errors
/// [`ScriptOptions::validate`]'s.
pub fn script(plan: &Plan, opts: &ScriptOptions) -> Result<String, ExportError> {
    opts.validate()?;
    let scenario = |exec: &str, per_s: f64| -> Value {
        let (rate, unit) = k6_rate(per_s);
        json!({
            "executor": "constant-arrival-rate",
            "exec": exec,
            "rate": rate,
            "timeUnit": unit,
            "duration": format!("{}s", opts.duration_s),
            "preAllocatedVUs": opts.pre_allocated_vus,
            "maxVUs": opts.max_vus,
        })
    };
    let mut scenarios = serde_json::Map::new();
    scenarios.insert("reads".into(), scenario("singleRead", opts.rate_per_s));
    // Turns are reads: none without a recorded read.
    let turns = opts.turn_rate_per_s > 0.0 && !plan.reads.is_empty();
    if turns {
        scenarios.insert("turns".into(), scenario("turn", opts.turn_rate_per_s));
    }
    let load = if turns {
        format!(
            "k6 constant-arrival-rate {}/s reads + {}/s {}-read turns, {}s",
            opts.rate_per_s, opts.turn_rate_per_s, opts.parallel, opts.duration_s
        )
    } else {
        format!(
            "k6 constant-arrival-rate {}/s reads, {}s",
            opts.rate_per_s, opts.duration_s
        )
    };
    let sp = ScriptPlan {
        transcript: &opts.transcript,
        url: &plan.url,
        era: plan.era,
        protocol_version: &plan.protocol_version,
        parallel: opts.parallel,
        turns,
        deadline: k6_ms(opts.deadline_us),
        deadline_ms: opts.deadline_us as f64 / 1000.0,
        timeout: k6_ms(opts.timeout_us),
        timeout_ms: opts.timeout_us as f64 / 1000.0,
        load,
        handshake: &plan.handshake,
        reads: &plan.reads,
        requests: &plan.requests,
        mix: {
            let mut n: std::collections::BTreeMap<&str, u64> = Default::default();
            for r in &plan.requests {
                *n.entry(r.method.as_str()).or_insert(0) += 1;
            }
            n.iter()
                .map(|(m, c)| format!("{m}={c}"))
                .collect::<Vec<_>>()
                .join(",")
        },
    };
    let body = include_str!("script.js")
        .replace(
            "SCENARIOS",
            &js(&Value::Object(scenarios))?.replace('\n', "\n  "),
        )
        .replace("THRESHOLDS", &js(&opts.thresholds)?.replace('\n', "\n  "))
        // Last: the recording's own text may contain anything.
        .replacen("PLAN_JSON", &js(&sp)?, 1);
    let mut out = String::new();
    out.push_str(&format!(
        "// k6 script written by `mcptape export k6` from {} ({:?} era, protocol {}).\n\
         // Run: k6 run [--out json=out.json] this.js   (target: MCP_URL={} by default)\n\
         // Then: mcptape import k6 out.json... --out DIR\n",
        if opts.transcript.is_empty() {
            "a transcript"
        } else {
            &opts.transcript
        },
        plan.era,
        plan.protocol_version,
        plan.url
    ));
    out.push_str(&body);
    Ok(out)
}
