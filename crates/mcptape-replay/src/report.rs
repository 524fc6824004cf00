//! Former home of the bench statistics and their rendering, now split into [`crate::stats`]
//! (quantiles, F(t)^N prediction, counters) and [`crate::render`] (table, `.hlog`, SVG). These
//! re-exports keep existing paths (`report::new_hist`, `report::BenchReport`,
//! `report::merge_hlog`, …) working; new code uses the two modules.

pub use crate::render::hlog::{Tagged, bench_hlog, merge_hlog, merge_hlog_tagged, write_hlog};
pub use crate::render::svg::{Curve, bench_svg, percentile_svg};
pub use crate::stats::{
    BenchReport, HIST_MAX_US, HIST_SIGFIG, Predicted, Quantiles, new_hist, predict_deadline_share,
    predict_turn_quantile_us,
};
