//! The indexes and design documents of a scenario's queries, each made before the first
//! phase that runs a query using it, or while that phase runs when it asks so (see
//! [`crate::query::builds`]), once per pass.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::driver::Endpoint;
use crate::driver::admin::Admin;
use crate::engine::stop::Signal;
use crate::exit::Failed;
use crate::query::builds::{self, IndexUnit, PhaseBuilds};
use crate::query::setup;
use crate::results::IndexBuildResult;
use crate::scenario::Scenario;
use crate::target::Target;

/// How long a query may wait for an index to be built: long, since a large database's
/// index takes long, but bounded like every request.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// The units to build and, per phase of the scenario, which of them are built around it.
pub struct Indexes {
    target: Target,
    node: Arc<Endpoint>,
    units: Vec<IndexUnit>,
    plan: Vec<PhaseBuilds>,
    /// The number of partitions of a partitioned database.
    partitions: Option<u64>,
    /// Ctrl-C: a build under way is not waited for any longer.
    stop: Signal,
}

impl Indexes {
    pub fn new(
        target: &Target,
        node: Arc<Endpoint>,
        scenario: &Scenario,
        partitions: Option<u64>,
        stop: Signal,
    ) -> Result<Indexes, Failed> {
        let units = builds::units(&scenario.queries);
        let plan = builds::plan(&scenario.phases, &units)
            .map_err(|problems| Failed::bad_input(problems.join("; ")))?;
        Ok(Indexes {
            target: target.clone(),
            node,
            units,
            plan,
            partitions,
            stop,
        })
    }

    /// Before phase `k` of the scenario: makes the indexes planned before it and says
    /// how long each took to build.
    pub async fn before(&self, k: usize) -> Result<Vec<IndexBuildResult>, Failed> {
        let planned = self.plan.get(k).map_or(&[][..], |p| &p.before[..]);
        self.build(planned).await
    }

    /// Before a rate search's phase `k`, whose steps have no build beside them: every
    /// index planned around it, `indexes = "during"` or not.
    pub async fn before_search(&self, k: usize) -> Result<Vec<IndexBuildResult>, Failed> {
        let planned: Vec<usize> = self
            .plan
            .get(k)
            .map(|p| p.before.iter().chain(&p.during).copied().collect())
            .unwrap_or_default();
        self.build(&planned).await
    }

    /// The indexes planned while phase `k` runs, as a future to run beside it; `None`
    /// when there are none.
    pub fn during(
        &self,
        k: usize,
    ) -> Option<impl Future<Output = Result<Vec<IndexBuildResult>, Failed>> + '_> {
        let planned = &self.plan.get(k)?.during;
        (!planned.is_empty()).then(|| self.build(planned))
    }

    async fn build(&self, planned: &[usize]) -> Result<Vec<IndexBuildResult>, Failed> {
        if planned.is_empty() {
            return Ok(Vec::new());
        }
        // A client of its own, so that a build running beside a phase waits on nothing
        // but the server.
        let mut admin = Admin::with_timeout(&self.target, self.node.clone(), BUILD_TIMEOUT);
        let mut results = Vec::with_capacity(planned.len());
        for &k in planned {
            let build = setup::build(&mut admin, &self.units[k], self.partitions);
            // A build may take up to BUILD_TIMEOUT; Ctrl-C ends the wait (the run then
            // reports what it measured), and the builds not done are not reported.
            let result = tokio::select! {
                result = build => result.map_err(super::runner::setup_failed)?,
                () = self.stop.raised() => break,
            };
            results.push(result);
        }
        Ok(results)
    }
}
