//! Documents the server names (`--id-scheme server`): a create is `POST /db` and takes
//! its id from the answer, a bulk insert sends documents without `_id` and takes each
//! row's id in request order. Every later operation uses the id kept with the document.

use super::{Abort, OperationTimes, Start, Worker};
use crate::driver::{Exchange, Method, responses};
use crate::engine::bulk_answer::unusable_server_id;
use crate::engine::kept::MostKept;
use crate::engine::transport::{Clock, Transport};
use crate::metrics::{ConnectionMetrics, Failure, FailureSamples};
use crate::text::Quoted;
use crate::workload::pool::LiveDocument;
use crate::workload::{DocumentIds, Operation};

/// Writes the id `document` was stored under into `out` (cleared first).
pub(super) fn write_id(ids: &DocumentIds, document: &LiveDocument, out: &mut String) {
    match &document.server_id {
        Some(id) => {
            out.clear();
            out.push_str(id);
        }
        None => ids.write(document.number, out),
    }
}

/// Appends `id` to a URL path as one segment. The tool's own ids need no escape (the
/// partition's `:` is allowed in a path); a server's may hold anything.
pub(super) fn push_encoded(path: &mut String, id: &str) {
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b':') {
            path.push(byte as char);
        } else {
            path.push_str(&format!("%{byte:02X}"));
        }
    }
}

/// The id and revision of a `POST /db` answer, if neither is longer than `most` allows.
fn written_as(
    answer: &Exchange,
    most: MostKept,
) -> Result<(Box<str>, crate::driver::Rev), Failure> {
    if !matches!(answer.status, 200..=202) {
        return Err(Failure::of_status(answer.status));
    }
    let (id, rev) = responses::written_id_rev(&answer.body).ok_or(Failure::BadAnswer)?;
    most.id(&id)?;
    let rev = most.rev(rev)?;
    match unusable_server_id(&id) {
        None => Ok((id.into(), rev)),
        Some(_) => Err(Failure::BadAnswer),
    }
}

impl<T: Transport, C: Clock> Worker<T, C> {
    /// `POST /db` with the document `number` without an `_id`: the answer names it.
    pub(super) async fn create_by_post(
        &mut self,
        metrics: &mut ConnectionMetrics,
        number: u64,
        start: Start,
    ) -> Result<(), Abort> {
        self.set_new_database_path(number);
        self.body.clear();
        let size = self.doc_size;
        self.shared
            .writer
            .write_sized(&mut self.body, number, 1, None, None, size);
        self.perform(
            metrics,
            Operation::Create,
            Method::Post,
            true,
            start,
            |w, _, answer| {
                let (id, rev) = written_as(answer, w.shared.most_kept)?;
                w.id.clear();
                w.id.push_str(&id);
                w.written_for_feeds(&rev);
                w.pool.add_stored(number, rev, Some(id), w.database);
                Ok(())
            },
        )
        .await
        .map(|_| ())
    }

    /// A bulk answer to documents without ids whose rows are not one per document: none
    /// can be paired, so each document's outcome is unknown (the server may have stored
    /// it), and the request failed as a bad answer.
    pub(super) fn unpaired_bulk_answer(
        &mut self,
        metrics: &mut ConnectionMetrics,
        answer: &Exchange,
        (rows, documents): (usize, usize),
        times: OperationTimes,
    ) {
        let failure = Failure::BadAnswer;
        let bulk = metrics.operation(Operation::BulkInsert);
        bulk.unknown += documents as u64;
        if bulk.samples.wants(&failure) {
            let mut said = format!(
                "{rows} rows for {documents} documents sent without ids: the server's ids pair with the documents by position only, so none could be; the start of the answer: "
            )
            .into_bytes();
            said.extend_from_slice(
                &answer.body[..answer
                    .body
                    .len()
                    .min(Quoted::window(FailureSamples::LENGTH))],
            );
            self.shared.note(&mut bulk.samples, &failure, &said);
        }
        self.shared
            .recorder
            .failed(metrics, Operation::BulkInsert, failure, times.service);
    }
}
