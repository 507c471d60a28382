// Real PouchDB replicates a database from a server into memory and prints, as one JSON
// object, what it then holds: for each document its winning revision, whether it is
// deleted, its conflicts (PouchDB's own `get(id, {conflicts: true})`), and every leaf.
// Used by tests/devices_protocol.rs: what devices pushed must be valid for PouchDB.
//
// node tests/scripts/pouchdb-replicate.js http://user:password@127.0.0.1:PORT/db

'use strict';

const PouchDB = require('pouchdb-core')
  .plugin(require('pouchdb-adapter-http'))
  .plugin(require('pouchdb-adapter-memory'))
  .plugin(require('pouchdb-replication'));

async function main(url) {
  const remote = new PouchDB(url);
  const local = new PouchDB('copy', { adapter: 'memory' });
  const replicated = await local.replicate.from(remote);
  const changes = await local.changes({ style: 'all_docs', since: 0 });
  const docs = {};
  for (const row of changes.results) {
    const leaves = await local.get(row.id, { open_revs: 'all' });
    const doc = {
      deleted: Boolean(row.deleted),
      leaves: leaves.map((leaf) => leaf.ok._rev).sort(),
    };
    if (!row.deleted) {
      const winner = await local.get(row.id, { conflicts: true });
      doc.winner = winner._rev;
      doc.conflicts = (winner._conflicts || []).slice().sort();
    }
    docs[row.id] = doc;
  }
  process.stdout.write(JSON.stringify({
    docs_read: replicated.docs_read,
    docs_written: replicated.docs_written,
    doc_write_failures: replicated.doc_write_failures,
    docs,
  }) + '\n');
}

main(process.argv[2]).catch((error) => {
  process.stderr.write(`pouchdb-replicate: ${error && error.stack || error}\n`);
  process.exit(1);
});
