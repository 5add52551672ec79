"""Engine III contact solver core: contact rows, impacts, position correction and the velocity-level solve.

Contacts are found after the drift (``find_contacts``) between engine bodies or a body and static geometry,
from the narrow phase of :mod:`mechgym.physics.collision` (points midway between the surfaces, normals
from geom1 to geom2, signed distances, feature ids). Each contact c between body a (geom1's body, -1 for
static geometry) and body b (geom2's) is three RATTLE-style rows in the 12-number gradient format of
:mod:`mechgym.physics.constraints` ([dg/dx_a, dg/dtheta_a, dg/dx_b, dg/dtheta_b], impulses on v and on
the world angular momentum L): for the direction d in {n, t1, t2} (normal and two tangents),

    J_d = [-d, -(r_a x d), d, r_b x d],    J_d v = d . (v_b + w_b x r_b - v_a - w_a x r_a),

with r the lever from each body's centre of mass to the contact point (m). The normal row is an inequality
(impulse P_n >= 0, normal velocity >= 0; impacts: see below); the tangent rows carry Coulomb friction in an exact
circular cone, |P_t| <= mu P_n, decided per point: the impulse that makes the slip zero is kept when it
lies in the static cone |P_t| <= mu_s P_n (stick); a point that static friction cannot hold slides: its
tangential impulse is mu_k P_n opposite the slip (kinetic friction). A contact whose gap exceeds ``TOUCH``
carries no force (unless it is near and closes slowly, below); the ``MARGIN`` (0.1 mm) keeps near contacts in
the set so that their feature ids persist.

One step of length h (``step.advance`` runs these among its own stages when the scene has contacts):

  opening kick   v += h/2 (g + F/m)                                               (step.opening_kick)
  warm_start     each contact of the previous step's set applies h/2 of its reaction force F, an
                 impulse along its rows at their (still valid) start-of-step poses          (this module)
  begin_step     store c_n, q_n                                              (constraints.begin_step)
  drift          c += h v_half, q: free-rotor flow                                      (step.drift)
  find_contacts  broad + narrow phase at the drifted pose; fast bodies swept against static geometry
                 first (continuous collision); rows, matching with the previous step (feature ids),
                 impact estimates and the targets of the position and velocity solves      (this module)
  correct_positions  projection of the poses along the start normals onto the gap targets;
                 velocities and momenta are left alone; in passes, the contacts of the bodies a
                 pass moved by more than the margin found again at their new poses        (this module)
  join_near      open contacts with static geometry that the correction pushed, or open by at most
                 RESTING_TOUCH beside touching ones or after pushing in the opening kick, join the
                 velocity solve as touching when they close slowly                        (this module)
  closing kick   v += h/2 (g + F/m)                                                     (step.py)
  solve_contacts projected Gauss-Seidel on the rows to tolerance, island by island (impacts: compression,
                 rebound, final inelastic stage); reaction forces                          (this module)
  settle_contacts after impacts, releases and unbalances: resting reactions as the next    (this module)
                 warm start

Warm start / rest (seed 000). F_c = (P_open + P_close) / h is the mean reaction over the step of a
persistent contact (one that touched in the previous step too): the impulse of the opening half plus the
closing solve's impulse. Applying h/2 F_c in the next opening kick makes contact forces act like explicit
forces in velocity Verlet: a resting body sees exactly zero net impulse in each half (rest is exact, no
creep on a slope), and a sliding body gets kinetic friction in both halves (second-order distances).
An impact's impulse is not a force and is not carried over: after an impact F is the resting reaction of a
trial solve when the impact brought the bodies to rest, else 0 (``settle_contacts``). After a step in which a
pushing contact let go, the resting reactions replace the others' mean forces too: those made up for the part
of its opening impulse that came after it let go. The resting reactions hold against gravity and the smooth
forces (servos, damping) at the end of the step. So do they for slow bodies after a step whose closing impulse
at some contact differs from its opening one (a load changed, or a force moved between the corners of a
face): carrying the mean on leaves the next opening kick out of balance, and the body moves in the drift.
At a reset
``prime_contacts`` gives the contacts of the initial poses their resting reactions. Persistence: same geom
pair and feature id, or (a clipping label that changed with round-off) the same point within MATCH_RADIUS.

Impacts (seed 000). A contact found penetrating by d = -dist that did not touch in the previous step is an
impact that happened up to a step ago (unless it approaches no faster than gravity brings a body to rest in
one step, |g| h: then a resting contact forms, e.g. a new clipping point under a resting box). The gap
is taken as quadratic in time over the step, with the relative normal acceleration a_n that the opening kick gave
it, a_n = (J_n v_half - J_n v_n) / (h/2) at the drifted poses: n . (g_b - g_a) in free flight (g for a moving
body, 0 for static geometry), and with the joints' and the other contacts' forces where they act (a slider that
its crank presses into a wall at hundreds of m/s^2: its rebound e u* + a_n tau reaches 0 within the step, and it
rests there, as after the exact sequence of ever smaller bounces), where those forces press the gap shut harder
than free flight does and change the approach speed over the step by no more than the approach speed itself
(KICK_ACCELERATION); free flight's a_n elsewhere (forces that pull the bodies apart, large steps of a driven
chain). So the gap a time tau before the end of the step is

    gap(tau) = dist + u_1 tau + a_n tau^2 / 2,

u_1 = u_half - a_n h/2 being the approach speed at the end of the step without contact (u_half = -J_n v_half,
the drift's approach speed). The impact happened tau = -2 dist / (u_1 + sqrt(u_1^2 - 2 a_n dist)) ago (the
root of gap(tau) = 0, in the form that is stable for a_n -> 0), with the approach speed u* = u_1 + a_n tau
(the acceleration gained since removed). Had it bounced on time (Newton: normal speed e u* after), it would now
be at the gap  e u* tau + a_n tau^2/2  moving at  e u* + a_n tau  (both clamped at 0: a body that would
already be back stays in contact): the gap is the position correction's target, the speed the impact's
rebound in ``solve_contacts`` (exact for a single point, in Poisson's energy-safe form for several, with one
restitution ratio per geom pair), and the event (t_1 - tau, geom1, geom2, u*) is recorded. For ballistic flight
the bounce is then exact up to round-off (landing times, apex ratios e^2).

Continuous collision. A body whose step moves it (|v_half| + w_max rho) h by more than ``CCD_FRACTION`` of
the smaller extent of one of its geoms and a static plane or box is swept against that static geometry by
conservative advancement on ``collision.toi_plane``/``toi_box`` (closed-form lower bounds of the time of
impact along the linear drift, rotation bounded by w_max = max(1/I) |L|). If it was separated at the start
of the step and first touches at the fraction s, its contacts with static geometry are taken at the
separated pose at s (normals, points, features), never from the possibly deep overlap after the drift,
with the margin widened by the rest of the step's motion (1 - s) (|v_half| + w_max rho) h, so that every point
the rest of the drift can bring in is in the set (a tumbling cube's other corners join its first corner's
impact; boxes apart with an edge first give the face's points too, ``collision.box_box``);
their gaps are extrapolated to the end of the drift, dist_end = dist_s + (1 - s) h J_n v_half, and the
position correction then projects the body back along that normal: a 1 mm wall stops a 20 m/s ball.
A pair of moving bodies whose relative motion bound (|v_a - v_b| + w_a r_a + w_b r_b) h is fast is swept the
same way on a lower bound of the pair's distance (``collision.toi.box_gap`` for two boxes), its contacts taken
at the first-touch poses (``detect.py``). Speculative contacts: every pair is collided with the margin widened
by how far the bodies' turns can move their points in the step (h w reach), so that the far corner of a plate
rocking on one corner is in the set: the position correction may not dig it in, and it joins the impact when
its gap closes within the step. An impact approaching no faster than VELOCITY_TOLERANCE is a resting contact.

Near contacts (``join_near``). The position correction keeps every contact of the set out of penetration, the open ones
too, and may have to push an open one (lambda > 0): its linearised gap is then 0, in touch. Such a contact of a body
with static geometry, or one open by at most RESTING_TOUCH (1e-6 m) on a body that touches elsewhere or that pushed in
the step's opening kick, joins the velocity solve as touching when it closes no faster than a resting contact forms
(u_end <= |g| h, on bodies without an impact). Without it a resting box that a step turned slightly keeps some corners
open by the second order of the turn (1e-7-4e-7 m for the 5 cm cube at 5 and 20 ms) and rocks in a cycle of two or three
steps: gravity's closing kick tips it about the corners that touch, and the next drift digs the others in; a body on
sprung legs, both feet lifted so by a drift that flexed the legs, falls for a step and hops. A near contact that pushes
carries its mean force on like a touching one; one that does not leaves the touching set after the solve. A box may so
rest with a corner up to RESTING_TOUCH off its support.

Passes of the correction (``correct_positions``). A pass that moves a body by more than MARGIN may bring it into
contact with geometry that was not in the set (a plate that the ball hitting it drives into a wall within the step),
and for a body that turned by a large angle in the step its linearised correction misses the true gaps at second
order (a tossed cube turning by 0.9 rad per step at 50 ms). After such a pass the contacts of the moved bodies are
found again at their new poses (``detect.recheck_contacts``: a new pair at the poses before the pass, where its
normals face the right way), a touching one now open by more than the margin leaves the touching set, and while one
is still below its target by more than TOUCH the correction runs again from the true gaps, up to POSITION_PASSES.
Where the step can still be taken in parts, a contact found this way that the correction would have to push (a second
impact inside the step: the plate on the wall) fails the step, whose parts then meet the impacts one at a time
(Newton's, in sequence); in a part of h/64 or shorter (``tolerances.CONTACT_SUBDIVISION``) it rests (no impact). The
contacts of a swept body whose gaps were carried from its first-touch pose over a turn whose second order exceeds the
margin are found again likewise after the first pass (``scratch.stale``: a capsule spinning at 125 rad/s after an impact
turns by 0.5 rad in a 4 ms step). A pass that would turn a body by more than CORRECTION_TURN fails the step, which is
then taken in parts (``step.py``): the linearised turn is no longer a turn (a box driven 10 cm through a 1 mm wall in a
30 ms step, pushed back at two corners, was turned by 4.2 rad and left across the wall).

With joints (constraint rows) every contact impulse goes with the equality rows' impulses that keep them
satisfied, and every position correction with the matching pose change (``joined.py``); the rows' velocity
projection runs between the contact sweeps for the one-sided rows.

Arrays (struct of arrays; ``ContactSet`` holds W worlds of C contacts each, contact c of world w at the flat
index w C + c so that constraints' kernels that read ``rows.body_a[r]`` take the set as it is).
Units: m, s, kg; impulses N s (rows), forces N (world vectors). The tolerances and caps named here (TOUCH, MARGIN,
RESTING_TOUCH, ...) are in :mod:`mechgym.physics.tolerances`.
"""

from .detect import find_contacts, join_near, sweep_setup
from .joined import Joined, clear_joined
from .position import correct_positions, place_on_rows
from .sets import HELD_FLOATS, HELD_INTS, ContactSet, Geoms, Scratch, contact_geoms, keep_contacts
from .solve import (
    begin_solve,
    contact_sweep,
    end_rebound,
    finish_solve,
    open_contacts,
    prime_contacts,
    settle_contacts,
    solve_contacts,
    start_rebound,
    update_sliding,
    warm_start,
)

__all__ = [
    "HELD_FLOATS",
    "HELD_INTS",
    "ContactSet",
    "Joined",
    "Geoms",
    "Scratch",
    "begin_solve",
    "clear_joined",
    "contact_geoms",
    "contact_sweep",
    "correct_positions",
    "place_on_rows",
    "end_rebound",
    "find_contacts",
    "open_contacts",
    "finish_solve",
    "join_near",
    "keep_contacts",
    "prime_contacts",
    "settle_contacts",
    "solve_contacts",
    "start_rebound",
    "sweep_setup",
    "update_sliding",
    "warm_start",
]
