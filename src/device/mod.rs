//! One device that replicates with the database over CouchDB's replication protocol, both
//! ways, keeping only what replicating correctly needs (see /work/design-30.md while
//! this is being built).
