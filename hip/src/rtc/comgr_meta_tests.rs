//! Unit tests of the metadata nodes against a stand-in comgr that treats a looked-up node as a view into
//! its parent (the strictest reading of comgr's API): every use of a node whose parent, or any ancestor,
//! was destroyed is recorded, and so is a destroy of a node already destroyed or never made.

use super::*;
use std::cell::RefCell;

#[derive(Clone, Debug)]
enum Doc {
    Map(Vec<(&'static str, Doc)>),
    Str(&'static str),
}

struct FakeNode {
    parent: Option<usize>,
    doc: Doc,
    alive: bool,
}

#[derive(Default)]
struct Fake {
    nodes: Vec<FakeNode>,
    misuse: Vec<String>,
}

thread_local! {
    static FAKE: RefCell<Fake> = RefCell::new(Fake::default());
}

const OK: Status = sys::AMD_COMGR_STATUS_SUCCESS;
const BAD: Status = sys::AMD_COMGR_STATUS_ERROR_INVALID_ARGUMENT;

fn gfx90a() -> Doc {
    Doc::Map(vec![
        ("Name", Doc::Str("amdgcn-amd-amdhsa--gfx90a")),
        (
            "Features",
            Doc::Map(vec![("sramecc", Doc::Str("")), ("xnack", Doc::Str(""))]),
        ),
    ])
}

impl Fake {
    fn make(&mut self, parent: Option<usize>, doc: Doc) -> RawNode {
        self.nodes.push(FakeNode {
            parent,
            doc,
            alive: true,
        });
        RawNode {
            handle: self.nodes.len() as u64,
        }
    }

    /// The node behind `raw` if it and every ancestor are alive; the misuse recorded otherwise.
    fn usable(&mut self, raw: RawNode, what: &str) -> Option<Doc> {
        let i = (raw.handle as usize).checked_sub(1)?;
        let mut at = Some(i);
        while let Some(j) = at {
            let Some(n) = self.nodes.get(j) else {
                self.misuse
                    .push(format!("{what} of unknown node {}", raw.handle));
                return None;
            };
            if !n.alive {
                self.misuse.push(if j == i {
                    format!("{what} of node {} after its destroy", raw.handle)
                } else {
                    format!(
                        "{what} of node {} after its parent {} was destroyed",
                        raw.handle,
                        j + 1
                    )
                });
                return None;
            }
            at = n.parent;
        }
        Some(self.nodes[i].doc.clone())
    }
}

fn with<R>(f: impl FnOnce(&mut Fake) -> R) -> R {
    FAKE.with(|fake| f(&mut fake.borrow_mut()))
}

unsafe extern "C" fn fake_isa(name: *const c_char, out: *mut RawNode) -> Status {
    // SAFETY: the code under test passes a NUL-terminated name and a live out-pointer.
    let name = unsafe { CStr::from_ptr(name) };
    if name != c"amdgcn-amd-amdhsa--gfx90a" {
        return BAD;
    }
    // SAFETY: as above.
    unsafe { *out = with(|f| f.make(None, gfx90a())) };
    OK
}

unsafe extern "C" fn fake_lookup(node: RawNode, key: *const c_char, out: *mut RawNode) -> Status {
    // SAFETY: the code under test passes a NUL-terminated key.
    let key = unsafe { CStr::from_ptr(key) }.to_str().unwrap();
    let made = with(|f| match f.usable(node, "lookup")? {
        Doc::Map(entries) => {
            let (_, v) = entries.into_iter().find(|(k, _)| *k == key)?;
            Some(f.make(Some(node.handle as usize - 1), v))
        }
        Doc::Str(_) => None,
    });
    match made {
        Some(n) => {
            // SAFETY: a live out-pointer from the code under test.
            unsafe { *out = n };
            OK
        }
        None => BAD,
    }
}

unsafe extern "C" fn fake_iterate(
    node: RawNode,
    callback: Option<MapCallback>,
    data: *mut c_void,
) -> Status {
    let Some(Doc::Map(entries)) = with(|f| f.usable(node, "iterate")) else {
        return BAD;
    };
    let parent = Some(node.handle as usize - 1);
    for (k, v) in entries {
        let (key, value) = with(|f| (f.make(parent, Doc::Str(k)), f.make(parent, v)));
        // SAFETY: the callback and its data as the code under test gave them, called during the call.
        let status = unsafe { callback.unwrap()(key, value, data) };
        // comgr's nodes for the callback end with it.
        with(|f| {
            for n in [key, value] {
                f.nodes[n.handle as usize - 1].alive = false;
            }
        });
        if status != OK {
            return status;
        }
    }
    OK
}

unsafe extern "C" fn fake_string(node: RawNode, size: *mut usize, out: *mut c_char) -> Status {
    let Some(Doc::Str(s)) = with(|f| f.usable(node, "string")) else {
        return BAD;
    };
    let bytes = [s.as_bytes(), &[0]].concat();
    // SAFETY: `size` is a live pointer; `out`, when not null, holds `*size` bytes (comgr's contract).
    unsafe {
        if !out.is_null() {
            let n = (*size).min(bytes.len());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast(), n);
        }
        *size = bytes.len();
    }
    OK
}

unsafe extern "C" fn fake_destroy(node: RawNode) -> Status {
    with(|f| {
        match (node.handle as usize)
            .checked_sub(1)
            .and_then(|i| f.nodes.get_mut(i))
        {
            Some(n) if n.alive => {
                n.alive = false;
                OK
            }
            _ => {
                f.misuse
                    .push(format!("destroy of node {} not alive", node.handle));
                BAD
            }
        }
    })
}

fn fake() -> MetaFns {
    with(|f| *f = Fake::default());
    MetaFns {
        isa_metadata: fake_isa,
        lookup: fake_lookup,
        iterate_map: fake_iterate,
        string: fake_string,
        destroy: fake_destroy,
    }
}

/// What the stand-in saw: misuses, and the nodes still alive.
fn report() -> (Vec<String>, usize) {
    with(|f| (f.misuse.clone(), f.nodes.iter().filter(|n| n.alive).count()))
}

#[test]
fn features_are_read_while_the_isa_node_lives_and_every_node_is_destroyed_once() {
    let fns = fake();
    assert_eq!(
        isa_features(fns, c"amdgcn-amd-amdhsa--gfx90a"),
        Some(vec!["sramecc".to_string(), "xnack".to_string()])
    );
    assert_eq!(report(), (vec![], 0));
    assert_eq!(isa_features(fns, c"amdgcn-amd-amdhsa--gfx9999"), None);
    assert_eq!(report(), (vec![], 0));
}

#[test]
fn a_child_node_is_destroyed_before_its_parent() {
    let fns = fake();
    let root = Node::isa(fns, c"amdgcn-amd-amdhsa--gfx90a").unwrap();
    let name = root.lookup(c"Name").unwrap();
    assert!(root.lookup(c"Absent").is_none());
    assert_eq!(name.text().as_deref(), Some("amdgcn-amd-amdhsa--gfx90a"));
    drop(name);
    assert_eq!(report(), (vec![], 1), "the root is still alive");
    drop(root);
    assert_eq!(report(), (vec![], 0));
}

/// The order `isa_features` had before (the root destroyed right after the lookup, the features map
/// iterated after): the stand-in reports it, which a `Node` makes impossible to write (the child borrows
/// its parent, so the parent cannot be dropped first).
#[test]
fn the_old_order_uses_a_node_after_its_parent_was_destroyed() {
    let fns = fake();
    let mut root = RawNode { handle: 0 };
    let mut features = RawNode { handle: 0 };
    // SAFETY: the stand-in's functions, given live out-pointers and NUL-terminated strings.
    unsafe {
        assert_eq!(
            (fns.isa_metadata)(c"amdgcn-amd-amdhsa--gfx90a".as_ptr(), &mut root),
            OK
        );
        assert_eq!((fns.lookup)(root, c"Features".as_ptr(), &mut features), OK);
        (fns.destroy)(root);
        unsafe extern "C" fn ignore(_: RawNode, _: RawNode, _: *mut c_void) -> Status {
            OK
        }
        (fns.iterate_map)(features, Some(ignore), std::ptr::null_mut());
        (fns.destroy)(features);
    }
    let (misuse, alive) = report();
    assert_eq!(
        misuse,
        ["iterate of node 2 after its parent 1 was destroyed"],
        "{misuse:?}"
    );
    assert_eq!(alive, 0);
}
