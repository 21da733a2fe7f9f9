"""The files a scenario may name, one reader a format: flow lists and size distributions
(:mod:`.flows`), fabrics (:mod:`.topology_file`: fabricsim's JSON, InfraGraph, ns-3, htsim's
`.topo`), per-rank schedules (:mod:`.chakra`, :mod:`.goal`), htsim's connection matrices
(:mod:`.htsim`), and the limits every reader holds its input to (:mod:`.files`). Which format a
file is, by its suffix, is one table (:mod:`.formats`)."""
