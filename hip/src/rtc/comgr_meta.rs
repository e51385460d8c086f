//! comgr's metadata nodes (`amd_comgr_metadata_node_t`) with their lifetimes in the types: a [`Node`] is
//! destroyed once, on drop, and a node looked up in another ([`Node::lookup`]) borrows its parent, so the
//! parent is destroyed only after the child. comgr's documentation says nothing about a looked-up node
//! outliving the node it came from (its own tests and examples destroy the parent last; its implementation
//! shares the parsed document between them today), so the crate never relies on it. Nodes comgr hands to
//! a map iteration's callback are comgr's, valid only during the callback: they are read there, never
//! kept.
//!
//! The calls go through [`MetaFns`], plain function pointers, so that the unit tests can stand in for
//! comgr and check the order of every use against every destroy.

use hiprtc_sys::comgr as sys;
use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;

type Status = sys::amd_comgr_status_t;
type RawNode = sys::amd_comgr_metadata_node_t;
type MapCallback = unsafe extern "C" fn(RawNode, RawNode, *mut c_void) -> Status;

/// The metadata calls of one comgr that stays loaded for the rest of the process.
#[derive(Clone, Copy)]
pub(super) struct MetaFns {
    isa_metadata: unsafe extern "C" fn(*const c_char, *mut RawNode) -> Status,
    lookup: unsafe extern "C" fn(RawNode, *const c_char, *mut RawNode) -> Status,
    iterate_map: unsafe extern "C" fn(RawNode, Option<MapCallback>, *mut c_void) -> Status,
    string: unsafe extern "C" fn(RawNode, *mut usize, *mut c_char) -> Status,
    destroy: unsafe extern "C" fn(RawNode) -> Status,
}

impl MetaFns {
    /// The calls of `c`, a comgr loaded for the rest of the process (`'static`: `comgr::any()` keeps it in
    /// a static); `None` if it lacks one of them.
    pub(super) fn of(c: &'static sys::Comgr) -> Option<MetaFns> {
        Some(MetaFns {
            isa_metadata: *c.amd_comgr_get_isa_metadata.as_ref().ok()?,
            lookup: *c.amd_comgr_metadata_lookup.as_ref().ok()?,
            iterate_map: *c.amd_comgr_iterate_map_metadata.as_ref().ok()?,
            string: *c.amd_comgr_get_metadata_string.as_ref().ok()?,
            destroy: *c.amd_comgr_destroy_metadata.as_ref().ok()?,
        })
    }
}

/// A metadata node comgr made for the crate, destroyed once on drop. `'p` is the borrow of the node it was
/// looked up in (`'static` for a root): it cannot outlive that node.
pub(super) struct Node<'p> {
    fns: MetaFns,
    raw: RawNode,
    _parent: PhantomData<&'p Node<'p>>,
}

impl Node<'static> {
    /// The ISA metadata of `isa_name` (`amd_comgr_get_isa_metadata`), or `None` when comgr refuses it.
    pub(super) fn isa(fns: MetaFns, isa_name: &CStr) -> Option<Node<'static>> {
        let mut raw = RawNode { handle: 0 };
        // SAFETY: a function of a comgr loaded for the process (`MetaFns::of`), with every interface
        // version's signature; `isa_name` is NUL-terminated and alive for the call, `raw` a live local
        // comgr writes the new node to. The node is owned by the returned `Node` only on success.
        let status = unsafe { (fns.isa_metadata)(isa_name.as_ptr(), &mut raw) };
        // `then`, not `then_some`: a `Node` made eagerly on failure would destroy a node never made.
        (status == sys::AMD_COMGR_STATUS_SUCCESS).then(|| Node {
            fns,
            raw,
            _parent: PhantomData,
        })
    }
}

impl Node<'_> {
    /// The value of `key` in this map node (`amd_comgr_metadata_lookup`), or `None` when absent. The
    /// child borrows `self`: `self` is destroyed after it.
    pub(super) fn lookup(&self, key: &CStr) -> Option<Node<'_>> {
        let mut raw = RawNode { handle: 0 };
        // SAFETY: `self.raw` is a live node (destroyed only by `self`'s drop, which the borrow holds
        // off), `key` is NUL-terminated and alive for the call, `raw` a live local for the new node.
        let status = unsafe { (self.fns.lookup)(self.raw, key.as_ptr(), &mut raw) };
        (status == sys::AMD_COMGR_STATUS_SUCCESS).then(|| Node {
            fns: self.fns,
            raw,
            _parent: PhantomData,
        })
    }

    /// The keys of this map node, as text (`amd_comgr_iterate_map_metadata`); `None` if comgr fails or a
    /// key is not a string.
    pub(super) fn map_keys(&self) -> Option<Vec<String>> {
        struct Collect {
            fns: MetaFns,
            keys: Vec<String>,
            ok: bool,
        }
        unsafe extern "C" fn each(key: RawNode, _value: RawNode, data: *mut c_void) -> Status {
            // SAFETY: `data` is the `&mut collect` `map_keys` passed to the iteration, live and not
            // otherwise borrowed while comgr calls this back, on the calling thread, during that call.
            let c = unsafe { &mut *data.cast::<Collect>() };
            // SAFETY: `key` is a node comgr made for this callback, live until it returns; it is only
            // read here, never kept.
            match unsafe { node_string(c.fns, key) } {
                Some(k) => c.keys.push(k),
                None => c.ok = false,
            }
            sys::AMD_COMGR_STATUS_SUCCESS
        }
        let mut collect = Collect {
            fns: self.fns,
            keys: Vec::new(),
            ok: true,
        };
        // SAFETY: `self.raw` is live (as in `lookup`); `each` has the callback's signature and never
        // unwinds (it only pushes to a Vec; an allocation failure aborts); `collect` outlives the call.
        let rc = unsafe {
            (self.fns.iterate_map)(self.raw, Some(each), (&mut collect as *mut Collect).cast())
        };
        (rc == sys::AMD_COMGR_STATUS_SUCCESS && collect.ok).then_some(collect.keys)
    }

    /// The text of this string node.
    #[cfg(test)]
    fn text(&self) -> Option<String> {
        // SAFETY: `self.raw` is live, as in `lookup`.
        unsafe { node_string(self.fns, self.raw) }
    }
}

impl Drop for Node<'_> {
    fn drop(&mut self) {
        // SAFETY: `self.raw` is a node comgr made for this `Node` alone, destroyed once, here. Every node
        // looked up in it borrowed it and is gone already.
        unsafe { (self.fns.destroy)(self.raw) };
    }
}

/// The keys of the `Features` map of an ISA's metadata (`sramecc`, `xnack`; empty for a processor with
/// none), or `None` when comgr gives no such metadata. `features` is dropped (destroyed) before `root`.
pub(super) fn isa_features(fns: MetaFns, isa_name: &CStr) -> Option<Vec<String>> {
    let root = Node::isa(fns, isa_name)?;
    let features = root.lookup(c"Features")?;
    features.map_keys()
}

/// A string node's text.
///
/// # Safety
/// `node` is a live metadata node of the comgr `fns` belongs to.
unsafe fn node_string(fns: MetaFns, node: RawNode) -> Option<String> {
    let mut n = 0usize;
    // SAFETY: `node` is live (the caller's); this call only writes the size to `n`.
    if unsafe { (fns.string)(node, &mut n, std::ptr::null_mut()) } != sys::AMD_COMGR_STATUS_SUCCESS
    {
        return None;
    }
    let mut buf = vec![0u8; n.max(1)];
    // SAFETY: as above; comgr writes at most `n` bytes into `buf`, which holds `max(n, 1)`.
    if unsafe { (fns.string)(node, &mut n, buf.as_mut_ptr().cast()) }
        != sys::AMD_COMGR_STATUS_SUCCESS
    {
        return None;
    }
    buf.truncate(buf.iter().position(|&b| b == 0).unwrap_or(buf.len()));
    Some(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
#[path = "comgr_meta_tests.rs"]
mod tests;
