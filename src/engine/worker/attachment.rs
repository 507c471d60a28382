//! `attachment_write` and `attachment_read`: a standalone attachment sent as it is made,
//! and read back counted, never held whole.

use super::{Start, Worker, written};
use crate::driver::{Method, Streaming};
use crate::engine::transport::{Clock, Transport};
use crate::metrics::{ConnectionMetrics, Failure};
use crate::workload::Operation;
use crate::workload::attachment::{ATTACHMENT_NAME, attachment_body};

use super::Abort;

impl<T: Transport, C: Clock> Worker<T, C> {
    /// `PUT /db/{id}/blob?rev=…` on a live document, of a size drawn from
    /// `--attachment-size`; the answer's revision becomes the document's.
    pub(super) async fn attachment_write(
        &mut self,
        metrics: &mut ConnectionMetrics,
        start: Start,
    ) -> Result<(), Abort> {
        let Some(slot) = self.pick(metrics, Operation::AttachmentWrite) else {
            return Ok(());
        };
        let document = self.pool.get(slot);
        let length = self.shared.attachment_sizes.draw(&mut self.pick_rng);
        let body = attachment_body(self.shared.seed, document.number, length);
        self.path.push('/');
        self.path.push_str(ATTACHMENT_NAME);
        self.path.push_str("?rev=");
        document.rev.write_to(&mut self.path);
        self.streaming = Streaming {
            body: Some(body),
            ..Streaming::NONE
        };
        let settled = self
            .perform(
                metrics,
                Operation::AttachmentWrite,
                Method::Put,
                false,
                start,
                |w, _, answer| {
                    let rev = written(answer, w.shared.most_kept)?;
                    w.pool.set_rev(slot, rev);
                    w.pool.set_attachment(slot, length);
                    Ok(())
                },
            )
            .await;
        self.streaming = Streaming::NONE;
        self.set_aside_if_unknown(slot, settled?);
        Ok(())
    }

    /// `GET /db/{id}/blob` of an attachment this connection wrote: its body is counted as
    /// it comes and let go, and must be as long as what was written. A longer one is cut
    /// off as soon as it is past that length (`too_large`), a shorter one is a bad answer.
    pub(super) async fn attachment_read(
        &mut self,
        metrics: &mut ConnectionMetrics,
        start: Start,
    ) -> Result<(), Abort> {
        let Some(slot) = self.pool.pick_attached(&mut self.pick_rng) else {
            // Never sent: it counts, and takes no time.
            self.shared
                .recorder
                .failed(metrics, Operation::AttachmentRead, Failure::NoDocument, 0);
            return Ok(());
        };
        let length = u64::from(self.pool.get(slot).attachment);
        self.set_document_path(slot);
        self.path.push('/');
        self.path.push_str(ATTACHMENT_NAME);
        self.streaming = Streaming {
            body: None,
            // Room for an error answer when the attachment is tiny.
            count_answer_up_to: Some(length.max(ERROR_ROOM)),
            ..Streaming::NONE
        };
        let done = self
            .perform(
                metrics,
                Operation::AttachmentRead,
                Method::Get,
                false,
                start,
                |_, _, answer| match answer.status {
                    200 if answer.body_length == length => Ok(()),
                    200 => Err(Failure::BadAnswer),
                    status => Err(Failure::of_status(status)),
                },
            )
            .await;
        self.streaming = Streaming::NONE;
        done.map(|_| ())
    }
}

/// The least a counted answer may carry: a small attachment's 404 or 409 is longer than it.
const ERROR_ROOM: u64 = 64 * 1024;
