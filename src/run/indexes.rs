//! The indexes and design documents of a scenario's queries, made before the first phase
//! that runs a query (so that their build is timed on the documents the phases before it
//! stored), once per pass.

use std::sync::Arc;
use std::time::Duration;

use crate::driver::Endpoint;
use crate::driver::admin::Admin;
use crate::exit::Failed;
use crate::query::Query;
use crate::query::setup::build_indexes;
use crate::results::IndexBuildResult;
use crate::target::Target;
use crate::workload::{Operation, Phase};

/// How long a query may wait for an index to be built: long, since a large database's
/// index takes long, but bounded like every request.
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// The queries whose indexes are still to be made.
pub struct Indexes {
    admin: Admin,
    queries: Vec<Arc<Query>>,
    /// The number of partitions of a partitioned database.
    partitions: Option<u64>,
    made: bool,
}

impl Indexes {
    pub fn new(
        target: &Target,
        node: Arc<Endpoint>,
        queries: &[Arc<Query>],
        partitions: Option<u64>,
    ) -> Indexes {
        Indexes {
            admin: Admin::with_timeout(target, node, BUILD_TIMEOUT),
            queries: queries.to_vec(),
            partitions,
            made: queries.is_empty(),
        }
    }

    /// Before `phase`: when it is the first to run a query, makes every index and says
    /// how long each took to build.
    pub async fn before(&mut self, phase: &Phase) -> Result<Vec<IndexBuildResult>, Failed> {
        let queries = Operation::QUERIES.iter().any(|&op| phase.mix[op] > 0);
        if self.made || !queries || !phase.has_work() {
            return Ok(Vec::new());
        }
        self.made = true;
        build_indexes(&mut self.admin, &self.queries, self.partitions)
            .await
            .map_err(super::runner::setup_failed)
    }
}
