//! The file-system conformance suite: behaviour every [`FileSystem`](crate::FileSystem)
//! adapter keeps, written once and run against each adapter.
