//! The run's databases made ready before its phases and cleaned up after them: the run's
//! one database, or the `--databases` it spreads over, each under the same rules (used
//! only with `--reuse` when it holds documents, deleted only with `--recreate`, and by
//! `--cleanup` only when the run created it).

use std::sync::Arc;

use super::runner::setup_failed;
use crate::driver::Endpoint;
use crate::driver::admin::{Admin, ExistingDatabase, PreparedDatabase};
use crate::exit::Failed;
use crate::report::numbers::grouped;
use crate::target::Target;
use crate::words::counted;

/// The run's databases as the run found and left them before the first operation.
pub struct Prepared {
    /// Each database, in order, with what the run did to it.
    pub each: Vec<(Target, PreparedDatabase)>,
}

impl Prepared {
    /// Documents the databases held together when the run began.
    pub fn documents_before(&self) -> u64 {
        self.each.iter().map(|(_, p)| p.documents_before).sum()
    }

    fn created(&self) -> usize {
        self.each.iter().filter(|(_, p)| p.created).count()
    }

    /// The header's line on the databases of a spread run (see `database_line` for one).
    pub fn line(&self) -> String {
        let (count, created) = (self.each.len(), self.created());
        let what = if created == count {
            "created by this run".to_string()
        } else {
            format!(
                "{created} created by this run, {} existing with {} documents before the run",
                count - created,
                grouped(self.documents_before())
            )
        };
        format!("  {}: {what}\n", span(&self.each))
    }
}

/// `databases "db-0000" … "db-0003" (4)`: a spread run's databases, named by the first and the
/// last.
fn span(each: &[(Target, PreparedDatabase)]) -> String {
    match (each.first(), each.last()) {
        (Some((first, _)), Some((last, _))) if each.len() > 1 => format!(
            "databases {:?} … {:?} ({})",
            first.database,
            last.database,
            grouped(each.len() as u64)
        ),
        (Some((only, _)), _) => format!("database {:?}", only.database),
        _ => "no database".to_string(),
    }
}

/// Makes every database of `target` ready on `node`. Without `--reuse` or `--recreate`,
/// a database that holds documents stops the run before any is created; a failure half
/// way deletes the databases this run had created.
pub async fn prepare(
    target: &Target,
    node: &Arc<Endpoint>,
    existing: ExistingDatabase,
) -> Result<Prepared, Failed> {
    let targets = target.each();
    if targets.len() > 1 && existing == ExistingDatabase::Refuse {
        refuse_filled(&targets, node).await?;
    }
    let mut each = Vec::with_capacity(targets.len());
    for one in targets {
        let prepared = Admin::new(&one, node.clone()).prepare(existing).await;
        match prepared {
            Ok(prepared) => each.push((one, prepared)),
            Err(problem) => {
                let made = Prepared { each };
                // The run's own problem is the one to show; a failed deletion leaves
                // a database the user can see in the header's name.
                let _ = delete_created(&made, node).await;
                return Err(setup_failed(problem));
            }
        }
    }
    Ok(Prepared { each })
}

/// Each of `targets` that holds documents, as `"name" (N documents)`.
pub async fn filled(targets: &[Target], node: &Arc<Endpoint>) -> Result<Vec<String>, Failed> {
    let mut filled = Vec::new();
    for one in targets {
        let count = Admin::new(one, node.clone())
            .document_count()
            .await
            .map_err(setup_failed)?;
        if let Some(count) = count.filter(|&c| c > 0) {
            filled.push(format!(
                "{:?} ({})",
                one.database,
                counted(count, "document")
            ));
        }
    }
    Ok(filled)
}

/// Stops the run when any of `targets` holds documents, naming the first few.
async fn refuse_filled(targets: &[Target], node: &Arc<Endpoint>) -> Result<(), Failed> {
    const NAMED: usize = 3;
    let mut filled = filled(targets, node).await?;
    if filled.is_empty() {
        return Ok(());
    }
    let more = filled.len().saturating_sub(NAMED);
    filled.truncate(NAMED);
    let and_more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Err(Failed::bad_input(format!(
        "{}{and_more} already hold documents; sofabench does not touch existing data unless told: add --reuse to add to them, or --recreate to delete and recreate them",
        filled.join(", ")
    )))
}

/// Deletes the databases the run created; how many.
async fn delete_created(prepared: &Prepared, node: &Arc<Endpoint>) -> Result<usize, Failed> {
    let mut deleted = 0;
    for (one, _) in prepared.each.iter().filter(|(_, p)| p.created) {
        Admin::new(one, node.clone())
            .delete()
            .await
            .map_err(setup_failed)?;
        deleted += 1;
    }
    Ok(deleted)
}

/// `--cleanup` of a spread run: deletes the databases it created, never one it found,
/// and says so; true when it deleted them all.
pub async fn clean_up(prepared: &Prepared, node: &Arc<Endpoint>) -> Result<bool, Failed> {
    let deleted = delete_created(prepared, node).await?;
    let kept = prepared.each.len() - deleted;
    let line = if kept == 0 {
        format!("deleted {} (--cleanup)", span(&prepared.each))
    } else if deleted == 0 {
        format!(
            "kept {}: --cleanup only deletes a database the run created",
            span(&prepared.each)
        )
    } else {
        format!(
            "deleted {deleted} of {} (--cleanup); kept the {kept} it found: --cleanup only deletes a database the run created",
            span(&prepared.each)
        )
    };
    crate::run::runner::print(&format!("{line}\n"));
    Ok(kept == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(created: &[bool]) -> Prepared {
        let mut target = Target::parse("http://127.0.0.1:5984", "db").unwrap();
        target.databases = crate::workload::databases::parse(&created.len().to_string()).unwrap();
        let each = target
            .each()
            .into_iter()
            .zip(created)
            .map(|(t, &created)| {
                let documents_before = if created { 0 } else { 500 };
                (
                    t,
                    PreparedDatabase {
                        created,
                        documents_before,
                    },
                )
            })
            .collect();
        Prepared { each }
    }

    #[test]
    fn the_line_names_the_first_and_last_database_and_what_was_found() {
        assert_eq!(
            prepared(&[true, true, true]).line(),
            "  databases \"db-0000\" … \"db-0002\" (3): created by this run\n"
        );
        let mixed = prepared(&[true, false, false, true]);
        assert_eq!(mixed.documents_before(), 1000);
        assert_eq!(
            mixed.line(),
            "  databases \"db-0000\" … \"db-0003\" (4): 2 created by this run, 2 existing with 1,000 documents before the run\n"
        );
    }
}
