//! `sofabench run`: the flags made into one checked setup, carried out by the runner,
//! with the run's progress drawn on the terminal.

use std::sync::Arc;

use clap::ArgMatches;

use super::RunArgs;
use super::setup::{self, Given};
use super::terminal::Terminal;
use crate::engine::observer::{Observer, Observers, Silent};
use crate::exit::Failed;
use crate::exposition::MetricsEndpoint;
use crate::run::runner;

pub fn execute(args: RunArgs, matches: &ArgMatches) -> Result<(), Failed> {
    // Everything the user gave is checked before anything is sent.
    let setup = setup::build(&args, &Given(matches))?;
    let mut observer: Arc<dyn Observer> = if args.quiet {
        Arc::new(Silent)
    } else {
        Arc::new(Terminal::new(setup.engine.interval))
    };
    let endpoint = match args.metrics_listen {
        Some(address) => Some(MetricsEndpoint::start(address, setup.node)?),
        None => None,
    };
    if let Some(endpoint) = &endpoint {
        observer = Arc::new(Observers(vec![observer, endpoint.observer()]));
    }
    let outcome = runner::run(setup, observer);
    if let Some(endpoint) = endpoint {
        endpoint.finish(args.metrics_linger);
    }
    outcome
}
