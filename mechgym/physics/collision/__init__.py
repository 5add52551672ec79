"""Geometry layer of Engine III: narrow phase, broad phase and time of impact (numba kernels).

Conventions: lengths in m, times in s; rotation matrices (3, 3) with column j = local axis j in world
coordinates (MuJoCo's ``geom_xmat`` reshaped); geom types are MuJoCo's ``mjtGeom`` codes; contact normals
point from geom1 to geom2 and distances are signed (negative = penetration).

- ``collide`` / ``supported_pair`` / ``MAX_CONTACTS``: narrow phase (``narrow``, ``primitives``, ``box_box``);
- ``geom_aabbs`` / ``sweep_axis`` / ``broad_pairs`` (``sweep_pairs`` or ``grid_pairs``, ``grid_scratch``) /
  ``filter_arrays``: broad phase (``broad``);
- ``toi_plane`` / ``toi_box``: time of impact against static geometry (``toi``).
"""

from .broad import broad_pairs, filter_arrays, geom_aabbs, grid_pairs, grid_scratch, sweep_axis, sweep_pairs
from .narrow import BOX, CAPSULE, CYLINDER, MAX_CONTACTS, PLANE, SPHERE, collide, supported_pair
from .toi import toi_box, toi_plane

__all__ = ["BOX", "CAPSULE", "CYLINDER", "MAX_CONTACTS", "PLANE", "SPHERE", "broad_pairs", "collide",
           "filter_arrays", "geom_aabbs", "grid_pairs", "grid_scratch", "supported_pair", "sweep_axis", "sweep_pairs",
           "toi_box", "toi_plane"]
