//! Regions of all processes under one numbering: region ids are local to
//! a process, but a finding, a delay cost or the critical path speaks of
//! the same code on every rank, so regions with the same name and source
//! line share a global id. Regions of one name at different lines stay
//! apart: a lock taken at two places is two call sites to look at.

use std::collections::HashMap;

use parallax_model::event::RegionId;
use parallax_model::experiment::Experiment;
use parallax_model::region::{Category, RegionKind};

/// Global id of the time outside any region.
pub const OUTSIDE: u32 = 0;
/// Global id of a region missing from the definitions.
pub const UNKNOWN: u32 = 1;

/// One global region.
#[derive(Clone, Debug)]
pub struct Info {
    pub name: String,
    pub kind: RegionKind,
    pub source: Option<String>,
}

/// All regions, and each process's map into them.
#[derive(Debug)]
pub struct Table {
    pub regions: Vec<Info>,
    /// Per process: local id → global id (dense, ids are small).
    local: Vec<Vec<u32>>,
}

impl Table {
    pub fn new(exp: &Experiment) -> Table {
        let mut regions = vec![
            Info {
                name: "(outside regions)".into(),
                kind: RegionKind::User,
                source: None,
            },
            Info {
                name: "<unknown>".into(),
                kind: RegionKind::User,
                source: None,
            },
        ];
        let mut by_name: HashMap<(String, Option<String>), u32> = HashMap::new();
        let mut local = Vec::new();
        for p in &exp.processes {
            // Ids beyond this bound (never seen in practice) read as unknown.
            let max = p.regions.keys().copied().filter(|&id| id < 1 << 20).max();
            let mut map = vec![UNKNOWN; max.map_or(0, |m| m as usize + 1)];
            for (&id, r) in &p.regions {
                if id >= 1 << 20 {
                    continue;
                }
                let source = (!r.file.is_empty()).then(|| format!("{}:{}", r.file, r.line));
                let g = *by_name
                    .entry((r.name.clone(), source.clone()))
                    .or_insert_with(|| {
                        regions.push(Info {
                            name: r.name.clone(),
                            kind: r.kind,
                            source,
                        });
                        (regions.len() - 1) as u32
                    });
                map[id as usize] = g;
            }
            local.push(map);
        }
        Table { regions, local }
    }

    /// Global id of region `id` of process `process`.
    #[inline]
    pub fn global(&self, process: usize, id: RegionId) -> u32 {
        self.local
            .get(process)
            .and_then(|m| m.get(id as usize))
            .copied()
            .unwrap_or(UNKNOWN)
    }

    pub fn kind(&self, g: u32) -> RegionKind {
        self.regions
            .get(g as usize)
            .map_or(RegionKind::User, |r| r.kind)
    }

    pub fn name(&self, g: u32) -> &str {
        self.regions
            .get(g as usize)
            .map_or("<unknown>", |r| &r.name)
    }

    /// The category of time spent directly in region `g`.
    pub fn category(&self, g: u32) -> Category {
        self.kind(g).category()
    }
}
