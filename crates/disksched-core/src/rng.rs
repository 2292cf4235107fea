//! The random streams: one generator type for every draw a run makes
//! (workloads, drive noise, placement), seeded from the run's seed.

/// The random number generator every stream draws from (PCG, seeded by the run's seed).
pub type SimRng = rand_pcg::Pcg64Mcg;
