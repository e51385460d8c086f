//! A test-only stand-in for libamdhip64 (loaded by the `hip` crate's `dynamic-loading` feature through
//! `HIP_RS_AMDHIP64`): one or two fake devices backed by host memory, streams as host queues worked by
//! threads after seeded random delays, HIP's event, wait, capture and graph semantics, and a
//! happens-before race detector over every byte range an operation touches. It also exports RCCL's
//! NCCL API (`nccl`), standing in for `librccl.so.1` too. See docs/RELIABILITY.md, "The shadow runtime".
#![allow(non_snake_case, clippy::missing_safety_doc)]

mod clock;
mod detector;
mod device;
mod events;
mod graph;
mod graph_nodes;
mod graph_params;
mod graph_query;
mod ipc;
mod kernels;
mod memory;
mod memory_api;
mod nccl;
mod pool_share;
mod pools;
mod runtime_info;
mod shadow;
mod state;
mod stream_api;
mod stream_memop;
mod streams;
mod texture;
mod vmm;
mod vmm_share;

use hip_sys as sys;

pub type Status = sys::hipError_t;
pub const SUCCESS: Status = sys::hipSuccess;
pub const INVALID_VALUE: Status = sys::hipErrorInvalidValue;
pub const INVALID_HANDLE: Status = sys::hipErrorInvalidHandle;
pub const NOT_READY: Status = sys::hipErrorNotReady;
