//! Progress bars (indicatif) for `crawl`, the `bench` phases and `verify`: drawn on stderr only
//! when stderr is a terminal ([`std::io::IsTerminal`]); hidden otherwise (pipes, CI logs,
//! tests), so the machine-read output never carries bar frames.

use std::io::IsTerminal as _;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps with the indicatif template `template` (e.g. `"{bar:40} {pos}/{len}
/// reads"`), hidden when stderr is not a terminal. A template indicatif refuses falls back to
/// the default bar style.
pub fn bar(len: u64, template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb
}
