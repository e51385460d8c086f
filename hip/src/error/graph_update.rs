//! What HIP said when it refused to give an executable graph new parameters
//! ([`Error::GraphUpdate`](super::Error::GraphUpdate)): its message, its update result and the node.

use std::fmt;

/// The node a refused graph update failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailedGraphNode {
    /// Its place among the graph's nodes, in `hipGraphGetNodes`' order: an index into the new graph's
    /// [`Graph::topology`](crate::Graph::topology) for a whole-graph update, into the built graph's for
    /// a node update.
    pub index: usize,
    /// How many nodes that graph has.
    pub count: usize,
    /// What kind of node it is, in words (`"a copy node"`).
    pub kind: &'static str,
}

/// The details of [`Error::GraphUpdate`](super::Error::GraphUpdate), beside its call and code.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GraphUpdateFailure {
    /// The runtime's `hipGetErrorString` for the code.
    pub message: String,
    /// HIP's `hipGraphExecUpdateResult`, raw, for a whole-graph update (`hipGraphExecUpdate`); `None`
    /// for a node update, which reports no result.
    pub update_result: Option<i64>,
    /// What the update result means, in words (empty where there is none).
    pub meaning: &'static str,
    /// The node it failed at, where HIP named one of the graph's nodes.
    pub node: Option<FailedGraphNode>,
    /// Whether the graph is the new one handed to a whole-graph update (`"the new graph"`) or the built
    /// graph a node update names a node of (`"the graph"`).
    pub whole_graph: bool,
}

impl fmt::Display for GraphUpdateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(r) = self.update_result {
            write!(f, "; update result {r}: {}", self.meaning)?;
        }
        let graph = if self.whole_graph {
            "the new graph"
        } else {
            "the graph"
        };
        match self.node {
            Some(n) => write!(
                f,
                "; at node {} of {} of {graph} ({})",
                n.index, n.count, n.kind
            ),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_graph_refusal_says_its_result_and_node() {
        let f = GraphUpdateFailure {
            message: "the update failed".into(),
            update_result: Some(3),
            meaning: "a node's type changed",
            node: Some(FailedGraphNode {
                index: 1,
                count: 2,
                kind: "a copy node",
            }),
            whole_graph: true,
        };
        assert_eq!(
            f.to_string(),
            "the update failed; update result 3: a node's type changed; at node 1 of 2 of the new \
             graph (a copy node)"
        );
    }

    #[test]
    fn a_node_refusal_has_no_result_and_may_have_no_node() {
        let mut f = GraphUpdateFailure {
            message: "invalid value".into(),
            update_result: None,
            meaning: "",
            node: Some(FailedGraphNode {
                index: 0,
                count: 3,
                kind: "a child graph node",
            }),
            whole_graph: false,
        };
        assert_eq!(
            f.to_string(),
            "invalid value; at node 0 of 3 of the graph (a child graph node)"
        );
        f.node = None;
        assert_eq!(f.to_string(), "invalid value");
    }
}
