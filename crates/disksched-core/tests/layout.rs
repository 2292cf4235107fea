//! Layout: LBN <-> physical mapping of the Atlas 10K.
mod common;

use disksched_core::disk::Pbn;
use proptest::prelude::*;

#[test]
fn every_atlas_block_maps_to_a_distinct_sector_and_back() {
    let m = common::atlas();
    let l = &m.layout;
    assert_eq!(l.capacity(), 17_966_953, "what the .model file's zones map (DiskSim ignores its Block count)");
    let mut prev: Option<Pbn> = None;
    for lbn in 0..l.capacity() {
        let p = l.lbn_to_pbn(lbn);
        assert_eq!(l.pbn_to_lbn(p), Some(lbn), "lbn {lbn} -> {p:?}");
        // LBNs never go back to a lower cylinder.
        if let Some(q) = prev {
            assert!(p.cylinder >= q.cylinder, "lbn {lbn}: cylinder went back");
        }
        prev = Some(p);
    }
}

#[test]
fn every_physical_sector_is_one_lbn_or_unmapped() {
    let m = common::atlas();
    let l = &m.layout;
    let mut mapped = 0u64;
    for cylinder in 0..l.cylinders() {
        for head in 0..l.surfaces() {
            let spt = l.sectors_per_track(cylinder, head);
            for sector in 0..spt {
                let p = Pbn { cylinder, head, sector };
                if let Some(lbn) = l.pbn_to_lbn(p) {
                    assert_eq!(l.lbn_to_pbn(lbn), p);
                    mapped += 1;
                }
            }
        }
    }
    assert_eq!(mapped, l.capacity());
}

#[test]
fn zone_geometry_follows_the_model_file() {
    // Sectors per track at each zone's first cylinder, from atlas10k.model.
    let text = std::fs::read_to_string(common::shared("atlas10k.model")).unwrap();
    let grab = |key: &str| -> Vec<u32> {
        text.lines().filter(|l| l.contains(key)).map(|l| l.split('=').nth(1).unwrap().trim().trim_end_matches(',').parse::<f64>().unwrap() as u32).collect()
    };
    let (firsts, spts) = (grab("First cylinder number"), grab("Blocks per track"));
    assert_eq!(firsts.len(), 24);
    let m = common::atlas();
    for (c, s) in firsts.iter().zip(&spts) {
        assert_eq!(m.layout.sectors_per_track(*c, 0), *s);
    }
}

#[test]
fn pieces_cover_a_request_exactly_once() {
    let m = common::atlas();
    let mut pieces = Vec::new();
    for &(lbn, blocks) in &[(0u64, 1u32), (333, 2), (0, 20_000), (17_966_953 - 500, 500), (5_000_000, 4096)] {
        m.layout.pieces(lbn, blocks, &mut pieces);
        let total: u32 = pieces.iter().map(|p| p.blocks).sum();
        assert_eq!(total, blocks);
        // Each piece's blocks are the LBNs of consecutive sectors on its track, in order.
        let mut next = lbn;
        for p in &pieces {
            let mut got = vec![];
            for k in 0..p.span_sectors {
                let s = (p.first_sector + k) % p.sectors_per_track;
                if let Some(x) = m.layout.pbn_to_lbn(Pbn { cylinder: p.cylinder, head: p.head, sector: s }) {
                    got.push(x);
                }
            }
            let want: Vec<u64> = (next..next + p.blocks as u64).collect();
            assert_eq!(got, want);
            next += p.blocks as u64;
        }
    }
}

proptest! {
    #[test]
    fn lbn_pbn_roundtrip(lbn in 0u64..17_966_953) {
        let m = common::atlas();
        let p = m.layout.lbn_to_pbn(lbn);
        prop_assert!(p.sector < m.layout.sectors_per_track(p.cylinder, p.head));
        prop_assert!(p.head < 6);
        prop_assert_eq!(m.layout.pbn_to_lbn(p), Some(lbn));
    }
}

/// The one-track-at-a-time walk (`first_piece`) and the direct track lookup
/// (`track_lbns_of`) agree with the full layout on every catalogue drive.
#[test]
fn first_piece_and_track_of_lbn_agree_with_the_full_layout_on_every_drive() {
    use disksched_core::disk::{builtin, DiskModel, Predictor};
    let mut pieces = Vec::new();
    let mut laid_out = 0;
    for name in builtin::names() {
        let m = std::sync::Arc::new(DiskModel::new(builtin::resolve(name, None).unwrap()).unwrap());
        let predictor = Predictor::exact(m.clone());
        let l = &m.layout;
        let cap = l.capacity();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for k in 0..3000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lbn = if k < 3 { [0, cap / 2, cap - 1][k as usize] } else { (x >> 11) % cap };
            let blocks = (1 + (x >> 3) % 1200).min(cap - lbn) as u32;
            l.pieces(lbn, blocks, &mut pieces);
            assert_eq!(l.first_piece(lbn, blocks), pieces[0], "{name}: lbn {lbn} blocks {blocks}");
            for p in &pieces {
                let track = l.track_lbns(p.cylinder, p.head);
                assert_eq!((p.track_first_lbn, p.track_blocks as u64), track, "{name}: lbn {lbn} blocks {blocks} piece {p:?}");
            }
            // Each piece holds the LBNs its sectors hold, as the inverse mapping finds them, in order.
            let mut next = lbn;
            for p in &pieces {
                let held: Vec<u64> = (0..p.span_sectors)
                    .filter_map(|k| l.pbn_to_lbn(Pbn { cylinder: p.cylinder, head: p.head, sector: (p.first_sector + k) % p.sectors_per_track }))
                    .collect();
                assert_eq!(held, (next..next + p.blocks as u64).collect::<Vec<_>>(), "{name}: lbn {lbn} blocks {blocks} piece {p:?}");
                next += p.blocks as u64;
            }
            let p = l.lbn_to_pbn(lbn);
            let (first, n) = l.track_lbns_of(lbn);
            assert_eq!((first, n), l.track_lbns(p.cylinder, p.head), "{name}: lbn {lbn}");
            assert!(first <= lbn && lbn < first + n, "{name}: lbn {lbn} outside its track [{first}, +{n})");
            // The hot path's shortcuts give what the full mapping gives.
            assert_eq!(l.lbn_to_pbn_spt(lbn), (p, l.sectors_per_track(p.cylinder, p.head)), "{name}: lbn {lbn}");
            let near = l.track_lbns_of(lbn.saturating_sub((x >> 7) % 600));
            assert_eq!(l.track_lbns_of_near(lbn, near), (first, n), "{name}: lbn {lbn} near {near:?}");
            // The read-ahead's first piece laid out from the read's own piece, where that tells.
            let after = lbn + pieces[0].blocks as u64;
            if after < cap {
                let b = (1 + (x >> 17) % 600).min(cap - after) as u32;
                if let Some(p) = l.piece_after(&pieces[0], after, b) {
                    assert_eq!(p, l.first_piece(after, b), "{name}: after lbn {lbn} blocks {blocks}");
                    laid_out += 1;
                }
            }
            // A request's target and its one-track piece, mapped once on arrival.
            let (target, piece) = predictor.target_mapped(lbn, blocks);
            assert_eq!(target, predictor.target(lbn), "{name}: lbn {lbn}");
            assert_eq!(piece, (pieces.len() == 1).then_some(pieces[0]), "{name}: lbn {lbn} blocks {blocks}");
        }
    }
    assert!(laid_out > 1000, "piece_after told only {laid_out} pieces");
}

/// A memo takes a piece only from its own layout (or a clone of it): a piece
/// offered by another layout, even of the same drive, is mapped again.
#[test]
fn a_memo_is_seeded_only_from_its_own_layout() {
    use disksched_core::disk::{Layout, MappedPieces, TrackPiece};
    let m = common::atlas();
    let (own, other) = (m.layout.clone(), Layout::new(&m.spec).unwrap());
    let (lbn, blocks) = (1_000_000, 8);
    let mut truth = Vec::new();
    own.pieces(lbn, blocks, &mut truth);
    let bogus = TrackPiece { first_sector: (truth[0].first_sector + 1) % truth[0].sectors_per_track, ..truth[0] };
    let mut memo = MappedPieces::default();
    own.seed_memo(&other, lbn, bogus, &mut memo);
    assert_eq!(own.pieces_memo(lbn, blocks, &mut memo), &truth[..]);
    own.seed_memo(&m.layout, lbn, bogus, &mut memo);
    assert_eq!(own.pieces_memo(lbn, blocks, &mut memo), &[bogus][..], "a clone's piece is used as it is");
}
