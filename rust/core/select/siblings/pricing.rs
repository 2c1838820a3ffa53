//! `estimate_cost` (SPEC "Shared prefixes") over requests of one parent's fragments: rows of
//! one input are the same fragment exactly when they are the same row (ids are unique), so
//! a request is its rows in the order sent.

/// What a token written to the cache and one read from it cost, as multiples of an
/// uncached input token, and the shortest prefix a provider caches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pricing {
    pub write: f64,
    pub read: f64,
    pub min_prefix: u128,
}

/// `CacheCost`: the billed total and the token counts it is made of, summed over requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    pub billed: f64,
    pub uncached: u128,
    pub cached: u128,
    pub written: u128,
}

/// What sending `requests` in this order costs, as `estimate_cost` prices it: each reads its
/// longest shared prefix with an earlier request and writes what a later one reads beyond
/// that, each counted from `min_prefix` tokens on. `billed` is rounded as Python rounds
/// `read * cached + write * written + plain` over ints.
pub fn estimate(requests: &[Vec<u32>], token_counts: &[u64], pricing: &Pricing) -> Cost {
    let floor = pricing.min_prefix;
    let (mut uncached, mut cached_total, mut written_total) = (0u128, 0u128, 0u128);
    for (tokens, earlier, later) in shared_prefixes(requests, token_counts) {
        let cached = if earlier >= floor { earlier } else { 0 };
        let later = if later >= floor { later } else { 0 };
        uncached += tokens;
        cached_total += cached;
        written_total += later.saturating_sub(cached);
    }
    let plain = uncached - cached_total - written_total;
    Cost {
        billed: pricing.read * cached_total as f64
            + pricing.write * written_total as f64
            + plain as f64,
        uncached,
        cached: cached_total,
        written: written_total,
    }
}

/// For each request: its tokens, and the tokens of its longest shared prefix with any
/// earlier request and with any later one. One trie over the requests: a node a request
/// walks into was made by an earlier one, and the last request through a node tells
/// whether a later one shares it. A node's children are a list: requests of one parent
/// branch little, and a walk along the list costs less than hashing every edge.
fn shared_prefixes(requests: &[Vec<u32>], token_counts: &[u64]) -> Vec<(u128, u128, u128)> {
    let rows: usize = requests.iter().map(Vec::len).sum();
    let mut nodes: Vec<Node> = Vec::with_capacity(rows + 1);
    nodes.push(Node::new(0, 0, 0));
    let mut paths: Vec<Vec<u32>> = Vec::with_capacity(requests.len());
    let mut earlier = Vec::with_capacity(requests.len());
    for (position, request) in requests.iter().enumerate() {
        let (mut node, mut shared) = (0usize, 0u128);
        let mut path = Vec::with_capacity(request.len());
        for &row in request {
            let mut child = nodes[node].first_child;
            while child != NO_NODE && nodes[child as usize].row != row {
                child = nodes[child as usize].next_sibling;
            }
            if child == NO_NODE {
                child = nodes.len() as u32;
                let tokens = nodes[node].tokens + u128::from(token_counts[row as usize]);
                let mut made = Node::new(row, tokens, position);
                made.next_sibling = std::mem::replace(&mut nodes[node].first_child, child);
                nodes.push(made);
            } else {
                let reached = &mut nodes[child as usize];
                shared = reached.tokens;
                reached.last_request = position;
            }
            node = child as usize;
            path.push(child);
        }
        paths.push(path);
        earlier.push(shared);
    }
    paths
        .iter()
        .enumerate()
        .map(|(position, path)| {
            let mut later = 0;
            for &node in path {
                let node = &nodes[node as usize];
                if node.last_request <= position {
                    break;
                }
                later = node.tokens;
            }
            let tokens = path.last().map_or(0, |&node| nodes[node as usize].tokens);
            (tokens, earlier[position], later)
        })
        .collect()
}

const NO_NODE: u32 = u32::MAX;

/// A prefix that requests share: its last row and tokens, the last request through it, its
/// first child and its next sibling.
struct Node {
    row: u32,
    tokens: u128,
    last_request: usize,
    first_child: u32,
    next_sibling: u32,
}

impl Node {
    fn new(row: u32, tokens: u128, last_request: usize) -> Node {
        Node {
            row,
            tokens,
            last_request,
            first_child: NO_NODE,
            next_sibling: NO_NODE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICES: Pricing = Pricing {
        write: 1.25,
        read: 0.1,
        min_prefix: 0,
    };

    /// The longest shared prefix, in tokens, of two requests.
    fn common(a: &[u32], b: &[u32], tokens: &[u64]) -> u128 {
        a.iter()
            .zip(b)
            .take_while(|(x, y)| x == y)
            .map(|(&row, _)| u128::from(tokens[row as usize]))
            .sum()
    }

    /// The contract's definition, pair by pair.
    fn by_pairs(requests: &[Vec<u32>], tokens: &[u64], pricing: &Pricing) -> Cost {
        let floor = |shared: u128| {
            if shared >= pricing.min_prefix {
                shared
            } else {
                0
            }
        };
        let (mut uncached, mut cached, mut written) = (0, 0, 0);
        for (j, request) in requests.iter().enumerate() {
            let best = |range: &mut dyn Iterator<Item = &Vec<u32>>| {
                range
                    .map(|other| common(request, other, tokens))
                    .max()
                    .unwrap_or(0)
            };
            let read = floor(best(&mut requests[..j].iter()));
            let later = floor(best(&mut requests[j + 1..].iter()));
            uncached += request
                .iter()
                .map(|&row| u128::from(tokens[row as usize]))
                .sum::<u128>();
            cached += read;
            written += later.saturating_sub(read);
        }
        let plain = uncached - cached - written;
        Cost {
            billed: pricing.read * cached as f64 + pricing.write * written as f64 + plain as f64,
            uncached,
            cached,
            written,
        }
    }

    #[test]
    fn the_trie_prices_as_the_pairs_do() {
        let tokens = [300, 500, 0, 700, 200, 1_100];
        let requests = [
            vec![0, 1, 2, 3],
            vec![0, 1, 4],
            vec![5, 0],
            vec![0, 1, 2, 3, 4],
            vec![],
            vec![5, 0, 1],
            vec![0, 1, 4],
        ];
        for min_prefix in [0, 300, 800, 801, 1_500, 10_000] {
            let pricing = Pricing {
                min_prefix,
                ..PRICES
            };
            for end in 0..=requests.len() {
                let found = estimate(&requests[..end], &tokens, &pricing);
                assert_eq!(
                    found,
                    by_pairs(&requests[..end], &tokens, &pricing),
                    "{min_prefix} {end}"
                );
            }
        }
    }

    #[test]
    fn the_same_request_n_times_is_one_write_and_reads() {
        let tokens = [2_000];
        let requests = vec![vec![0]; 4];
        let cost = estimate(
            &requests,
            &tokens,
            &Pricing {
                min_prefix: 1_024,
                ..PRICES
            },
        );
        assert_eq!(
            (cost.uncached, cost.cached, cost.written),
            (8_000, 6_000, 2_000)
        );
        assert_eq!(cost.billed / cost.uncached as f64, (1.25 + 3.0 * 0.1) / 4.0);
    }
}
