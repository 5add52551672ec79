"""The engine's tolerances and caps: every threshold on a residual, gap, velocity, pivot, ratio or angle, and every
bound on iterations, sweeps, passes, subdivisions and points, grouped by the stage that uses it, each with its unit
and the reason for its value (kind codes, array layouts and structural sizes stay in their modules). Change a value
only together with its reason."""

# ---- Step (step.py) --------------------------------------------------------------------------------------------------

# relative: the fixed-point iteration of the implicit closing kick stops when every update is below this times the
# size of the terms summed (|v_half| + |dv|), i.e. at round-off
CLOSING_KICK_TOLERANCE = 1e-14
# count: iterates of the closing kick at most; one that has not converged by then is too stiff for h (NOT_CONVERGED)
CLOSING_KICK_ITERATIONS = 100
# count: halvings of a failed step. A step whose solve fails (NON_FINITE, NOT_CONVERGED, NOT_PROJECTED,
# CONTACTS_NOT_SOLVED) is taken again as two steps of h/2, each of those likewise, down to h / 2**MAX_SUBDIVISION;
# only a failure there fails the step. SHAKE's equations g(q(lambda)) = 0 (impulses along G(q_n)) have a solution
# only for h small enough against the configuration: a chain whose light link spins on its own axis at 70 rad/s
# under a 1 N m motor reaches a fold of g at h = 1 ms (|g| stalls at 5e-5 m with dg/dlambda of condition 1e8, the
# exact Newton iteration included) and is solved at h/2. Ten halvings cover an h 1024 times too large for the
# scene: a link on a ball joint whose mass lies on its own axis (inertia 8e-7 kg m^2 about it) carries a 1 mm bob
# of 0.18 kg on a motor hinge, and as the bob crosses that axis the link spins up from 150 to 1,400 rad/s within
# 1 ms, which SHAKE follows in parts of dt / 1024 (dt = 2 ms) and not of dt / 64 (random scenes, seeds 90-409 at 1,
# 2, 5 and 10 ms: 5 of 1,280 runs failed with six halvings, 1 with eight, none with ten; MuJoCo's own step
# diverges in each of these 5 runs within 0.11 s).
MAX_SUBDIVISION = 10
# count: in a part of h / 2**CONTACT_SUBDIVISION (h/64) or shorter the contact stages settle for what they leave to
# shorter parts in longer ones: the position correction takes any turn of a body and lets a second impact inside
# the part rest (``contact.correct_positions``), and a contact-space solve whose exact tries all stalled ends at its
# best point within INEXACT_VELOCITY (``contact.newton.newton_solve``). Parts of h/64 keep the impacts' sequence
# and the inexact solves far below the margins (0.16 nm at dt = 10 ms), and the halvings beyond, for the joints'
# solves, leave those steps as they were.
CONTACT_SUBDIVISION = 6
# relative (kinetic energy after SHAKE over before): SHAKE's iteration can also end on a spurious root: the same
# chain at h = 125 us met every row after 23 iterates with impulses that had raised the bodies' kinetic energy from
# 4.4 J to 396 J (its light link spun round), and steps of that length pumped it to 1600 J within 1 ms; at 62.5 us
# each SHAKE changed it by -6e-6 of itself. The impulses of a true root change it by about (h omega / 2)^2 of itself
# (a bob's straight drift pulled back onto its circle), and most remove energy (a kick's component across the
# rows): a SHAKE that more than doubles the kinetic energy (plus SHAKE_HEATING_FLOOR of round-off) is taken as not
# solved, and the step is taken in parts. An island's opening contact solve that more than doubles it
# (contact.open_contacts: the rows' shares of a contact the joints nearly block raised it from 13 to 62 J) is undone.
SHAKE_HEATING = 2.0
# J: the round-off allowed on top of SHAKE_HEATING, for bodies (nearly) at rest
SHAKE_HEATING_FLOOR = 1e-12

# ---- Constraints: RATTLE's position and velocity stages (constraints.py) ---------------------------------------------

# relative (of |c P| + |G v_start|): a damper row's residual G v + c P + G v_start (``constraints.damper_compliance``)
# sums terms that can each be far larger than it: a 50 g pad on 20 N s/m at dt = 2 ms has c P near 900 m/s while its sum
# is met to round-off, about 1e-13 m/s, the velocity tolerance itself. Its error counts only beyond this fraction (four
# units of round-off of the sum).
DAMPER_ROUNDING = 4.0 * 2.0**-52
# relative (of sum |G_i v_i|): a row's rate G v sums terms that can each be far larger than the velocity tolerance: a
# 20 g link spun by a motor at 814 rad/s has terms of 800 rad/s, whose round-off, 2e-13 rad/s, the velocity
# projection's passes met and could not get below (1e-13 to 1e-12 over 200 passes). Once the passes have not
# converged, a rate error counts only beyond this fraction (four units of round-off of the sum, as DAMPER_ROUNDING).
RATE_ROUNDING = 4.0 * 2.0**-52
# relative (residual over the last iteration's): the quasi-Newton matrices of the position stages (SHAKE's K, the
# contacts' joint restore's A) are taken once; an iteration that gains less than this factor on the residual takes
# its matrix again at the current poses (a Newton step). The passive slider-crank at 0.5 ms: the coupler-slider
# alignment row's SHAKE residual grew 1.5 % per iteration from 6e-13 with the first iterate's K.
SLOW_GAIN = 0.5
# count: halvings of a Newton step that moves a reset's start onto its rows (contact.position.place_on_rows) before the
# step is given up: 2^-30 of a step of 1 m is below the rows' tolerance's reach (1e-9 m), so a step that no halving
# makes a descent is no descent at all
LINE_SEARCH_HALVINGS = 30

# ---- Dense linear algebra (linalg.py) --------------------------------------------------------------------------------

# relative (to the largest diagonal entry): the proximal iteration's ridge (``linalg.proximal_lcp``): each iteration
# brings a mode of eigenvalue sigma a factor ridge / (sigma + ridge) closer (a squeezed card's slowest mode, 1e-7 of the
# diagonal: 0.01 per iteration), and the pivoting's systems have a condition number below 1 / ridge.
PROXIMAL_RIDGE = 1e-9
# count: proximal iterations at most (from the sweeps' multipliers two or three reach round-off)
PROXIMAL_ITERATIONS = 20
# count: pivots of ``linalg.principal_pivoting`` at most (the least-index rule is finite, but its worst case is
# exponential)
MAX_PIVOTS = 1000
# relative: pivot size below which an equation counts as dependent (each factorisation's scale: the Cholesky
# factorisations', the elimination's and the LU's)
DEPENDENT = 1e-12

# ---- Collision: broad and narrow phase (collision/) ------------------------------------------------------------------

# count (geoms): up to this many geoms ``collision.broad_pairs`` sweeps, above it uses the grid (both give the same
# pairs in the same order: a cost crossover, not an accuracy setting). The grid's work is linear in G but costs ~10x
# more per AABB test (hash probes, scattered memory); on boxes strewn over a floor (the sweep's bad case, O(G^1.5)) the
# two take the same time between G = 1600 and 6400 (benchmarks/bench_broad.py).
SWEEP_LIMIT = 4096
# relative: box-box separating-axis test: a face of B beats a face of A, and an edge axis the best face, only if its
# separation s exceeds AXIS_REL_TOL s_best + AXIS_ABS_TOL, so that the choice does not flicker between nearly equal
# axes (Box2D's rule for polygons, in 3D)
AXIS_REL_TOL = 0.95
# m: the absolute part of that bias (a tenth of MARGIN); also the separation above which boxes with an edge first
# count as apart, and the face's points within the margin join the edge contact: not within it, a corner resting
# on an edge would carry two contacts at one point, one along each normal
AXIS_ABS_TOL = 1e-5
# sine of the angle between two segments: segments closer to parallel than this are treated as lying side by side:
# a capsule along a capsule or along a box face gets a contact at both ends of the overlap (box_box and toi skip the
# edge axis of two edges at the same sine)
PARALLEL_SINE = 1e-6

# ---- Contact detection and the contact set (contact/sets.py, contact/detect.py) --------------------------------------

# m: contacts closer than this stay in the set (feature ids persist); only touching ones act
MARGIN = 1e-4
# m: a gap up to this (round-off above 0) counts as touching and may carry force
TOUCH = 1e-9
# m: a contact open by up to this that closes no faster than a resting contact forms joins the velocity solve as
# touching (``contact.join_near``): above the second-order gaps a step's turn of a resting box leaves (1e-7-4e-7 m for
# the 5 cm cube at 5 and 20 ms), far below what a support or a measurement resolves; a corner may rest this far off
RESTING_TOUCH = 1e-6
# m: a contact whose feature id changed (same point, new clipping label: round-off where edges of the two geoms
# coincide, as in a stack of equal boxes, moves it far less) continues the nearest predecessor of its pair within this
MATCH_RADIUS = 1e-6
# relative (of the approach speed per step): an impact's gap acceleration is the opening kick's
# (``contact.detect._free_approach``) where it presses the gap shut harder than free flight, by at most this fraction of
# the approach speed per step: the impact's time, speed and rebound then move by no more than that speed; beyond it
# (large steps of a driven chain, whose mean acceleration over a step is no longer the one at the impact) free flight
# under gravity
KICK_ACCELERATION = 1.0
# relative (of a geom's smallest half extent): continuous collision when a step moves a geom by more than this
# fraction of it; two geoms slower than this each move by less than a quarter of their half thickness and cannot
# pass through each other in a step, so the poses after the drift find them
CCD_FRACTION = 0.25
# count: conservative advancement steps of a sweep at most; each stays short of the first touch, so a sweep that
# reaches the cap ends at an s before it
CCD_ITERATIONS = 64

# ---- Contact velocity solve (contact/solve.py, contact/joined.py) ----------------------------------------------------

# m/s: the velocity solve stops when a sweep changes no contact velocity by more, which sets what it resolves: a box
# at rest on a plane keeps |v| below 100 times this (tests/physics/contact/test_contact_properties.py), and forces
# resolve to about m VELOCITY_TOLERANCE / h
VELOCITY_TOLERANCE = 1e-12
# count: sweeps of either contact solve (velocity and position) at most (a cold stack needs thousands); more: not
# converged, the solves return -1
MAX_SWEEPS = 100000
# m/s: a point that slips faster than this after the solve slides, and a sliding one that slips slower sticks again
# (a thousand times VELOCITY_TOLERANCE, so that what the solve leaves of a held point's slip is no slip)
SLIP = 1e-9
# relative: a touching contact whose closing impulse differs from its opening one by this fraction of the largest
# impulse among its component's touching contacts carried no force that balanced the step's loads (a steady rest
# matches to round-off, ~1e-10 of that; a pad touching another with 1e-20 N s at one corner and 4e-10 N s at another
# changes the first by all of it, and by nothing that matters), unless the component's changes together change no
# contact's rate by more than VELOCITY_TOLERANCE (only the shares of a load changed: ``contact.solve._split_only``)
UNBALANCED = 1e-6
# count: nearly dependent contacts (a thin card squeezed between two pads on joints) gain little per sweep near the
# solution: after this many sweeps (a hundredth of MAX_SWEEPS), a sweep that changes no velocity by more than
# SLOW_VELOCITY counts as converged (``contact.solve._converge``)
VELOCITY_SLOW_SWEEPS = 1000
# m/s: the velocity solve's tolerance after VELOCITY_SLOW_SWEEPS: a hundred times VELOCITY_TOLERANCE, still a tenth
# of SLIP, the slip that decides sliding
SLOW_VELOCITY = 1e-10
# relative (of the row's free-body coupling): a contact row whose joined coupling is below this fraction of its
# free-body one moves nothing the joints allow (e.g. a tangent along a hinge's axis, whose joined coupling
# J W J^T - y^T A^{-1} y is the round-off of that difference): its coupling is set to exactly 0 and it takes no
# impulse
BLOCKED = 1e-10

# ---- Contact space: the velocity solve's sweeps and direct steps on the contacts' matrix (contact/dense.py) ----------

# count: sweeps on the bodies before a set still unconverged goes on in contact space: a sweep on the bodies costs a
# few microseconds per contact whatever it gains, one in contact space 3m multiply-adds per impulse change
DENSE_AFTER = 2
# count: a direct solution in contact space whose constraint rows then miss their tolerance (equality rows 1e-12 to
# 1e-10 m/s off, against 1e-13, where the joints nearly lock a contact's directions: a chain's sphere pressed by a
# motor against its first link, random scene 1955, D of eigenvalues 1e-8 and 35 m/s per N s) is corrected by
# the rows' sweep and the sweeps on the bodies go on from there; if they have not converged DENSE_RETRY_AFTER sweeps
# later the set is solved directly again (``contact.solve._converge``), at most this many times. In scene 1955 the
# sweeps never converged (1e5 of them, in every part of the step down to dt / 1024); the rounds of a direct solve and
# the rows' exact correction met both tolerances within one to seven rounds in most solves, and where eight missed,
# the step's parts did
DENSE_RETRIES = 8
# count: see DENSE_RETRIES; as VELOCITY_SLOW_SWEEPS, so that sweeps which converge in their first thousand go their way
DENSE_RETRY_AFTER = 1000
# count (contacts): touching contacts at most in an island that the velocity solve takes to contact space: a pile of
# boxes in a bin makes islands of 40-60 (64 boxes), which the sweeps on the bodies alone could not converge. The
# matrices are sized per scene, DENSE_PER_BODY contacts per body and at least DENSE_LEAST (a 96 x 96 matrix), so
# that a scene of one or two bodies keeps small ones.
DENSE_CONTACTS = 128
# count (contacts per body): see DENSE_CONTACTS
DENSE_PER_BODY = 8
# count (contacts): see DENSE_CONTACTS
DENSE_LEAST = 32
# count (contacts): touching contacts at most in an island that the opening half's contact solve takes
# (contact.open_contacts): a card squeezed between two pads and standing on a table has 12, a 3-box stack 12. The
# piles of boxes in a bin make many islands of 10-60 contacts, each a second dense solve a step (the 256-box bin:
# 85 -> 132 us a step per box with a cap of 16, 120 with 12, 104 with 8; that pile's trajectory changes with it):
# a larger island keeps the closing solve alone, as before that stage
OPEN_CONTACTS = 12
# count: sweeps before the first attempt of a direct solve (contact.newton, contact.active_set); each attempt that
# fails doubles the sweeps before the next (50, 100, 200, ...): where every attempt fails (an island of 57 contacts
# in a pile of boxes, about a second of Newton's and Levenberg-Marquardt's steps each) a solve makes a few, not one
# per 50 sweeps (a small island in a scene with rows: SMALL_DIRECT_EVERY)
VELOCITY_DIRECT_EVERY = 50

# ---- Friction (contact/friction.py) ----------------------------------------------------------------------------------

# relative (of mu_s P_n): a sticking point whose |P_t| reaches this fraction of mu_s P_n is at the static limit (the
# disc's projection puts |P_t| on the limit only to round-off)
SATURATED = 1.0 - 1e-9
# relative (to B + lam I's smaller eigenvalue): the Newton step of the multiplier at which it stops; from below the
# root every exact step is positive, and one this small is round-off
DISC_TOLERANCE = 1e-15
# count: Newton steps of the disc's secular equation at most: random blocks take 1 (isotropic) to 3.6 (anisotropy
# K_22/K_11 = 1e-6) on average, and 2 in 3,000 of the latter reach this cap (the result is put on the disc's edge)
DISC_ITERATIONS = 60
# relative: det K_tt below this times K_11 K_22 (about the ratio of the block's eigenvalues): the tangent block
# counts as singular, its smaller eigenvalue the round-off of a direction the joints block, and takes no impulse
# along that direction (the exact 1-D step along the other)
SINGULAR_BLOCK = 1e-12

# ---- Direct step on the active set (contact/active_set.py) -----------------------------------------------------------

# m/s: largest equation residual of an accepted step (the velocity solve's VELOCITY_TOLERANCE)
CONSISTENT = 1e-12
# rad: |change| of a unit friction direction below which it counts as against the slip: the sweeps turn the
# friction of a point that slips slowly (1e-6 m/s under a 8e-4 N s impulse) by about 1e-6 rad per sweep
ALIGNED = 1e-9
# count: solves of the active set's equations with its sliding points' directions updated, at most; a set whose
# directions still change after them takes no step, and the sweeps go on
DIRECTION_ITERATIONS = 20

# ---- Semismooth Newton on the contact-space problem (contact/newton.py) ----------------------------------------------

# count: steps from each start (the five stalled sets of the gripper in contact.newton's docstring need 2 to 30)
NEWTON_ITERATIONS = 100
# m/s: largest |F| of a solution, below the sweeps' VELOCITY_TOLERANCE so that they confirm it in one sweep
NEWTON_TOLERANCE = 1e-13
# relative: the fraction of the linear model's decrease of |F|^2 / 2 that a step must achieve (Armijo's condition
# with the customary small constant)
ARMIJO = 1e-4
# relative: decay of the non-monotone reference per step (0.5 and 0.9 left one of the five sets unsolved)
DECAY = 0.99
# relative: backtracking gives up below this fraction of the Newton step (thirty halvings of the full step)
SHORTEST_STEP = 2.0**-30
# Levenberg-Marquardt's damping of J^T J, relative to its largest diagonal entry: where it starts, and the range
# beyond which it gives up (below: the step is Newton's; above: a vanishing gradient step)
DAMPING_START = 1e-6  # relative: the first step's damping
DAMPING_LEAST = 1e-20  # relative: the damping a successful step lowers it to at least (its step is Newton's)
DAMPING_MOST = 1e10  # relative: a damping raised beyond this gives up (its step would be a vanishing gradient step)
# relative (to D's largest diagonal entry): the proximal-point iterations' eps (``contact.newton._proximal``): each
# brings a direction of D of eigenvalue sigma a factor eps / (sigma + eps) closer to the solution, while it keeps D +
# eps I positive definite for Newton's steps; of six sets of the Gripper whose other tries all stalled it solved one
# (in 16 iterations; 1e-7 and 1e-8 in 3 and 2, 1e-5 not in 100), the others with none of these
NEWTON_PROXIMAL = 1e-6
# count: proximal-point iterations at most (each one solve by Newton's steps with the search)
NEWTON_PROXIMAL_ITERATIONS = 30
# m/s: in a part of h / 2**CONTACT_SUBDIVISION or shorter, a contact-space solve whose every
# try stalled takes its best point on the cones if that misses the Coulomb conditions (Alart and Curnier's F) by at
# most this much, where the step would fail otherwise (``sim.inexact_solves`` counts them): a gap or slip of 1e-6 m/s
# over the part, at most 0.16 nm at dt = 10 ms, far below MARGIN; the best ends of the sets of the Gripper whose
# tries all stalled missed by 1.6e-13 to 2.1e-9 m/s (random servo targets after the pinch, dt = 1 and 10 ms)
INEXACT_VELOCITY = 1e-6

# ---- Position correction (contact/position.py) -----------------------------------------------------------------------

# count: passes of the position correction in a step (``contact.correct_positions``): each pass after the first starts
# from the true gaps of the last; a turn of the step's largest angles (a tossed cube at 50 ms, 0.9 rad) leaves the
# linearised correction a second-order error that a pass squares.
POSITION_PASSES = 4
# m: the position correction stops when a sweep moves no gap by more (far below TOUCH and PUSHING_GAP, so that what
# the sweeps leave decides no contact's touching state)
POSITION_TOLERANCE = 1e-13
# rad: a pass may turn a body by at most this much, or the step fails and is taken in parts (step.py; a part of h /
# 2**CONTACT_SUBDIVISION or shorter takes any turn). The pass is linear in the turn, dx = W J^T lambda along the normals
# of the first touch: a 3.7 cm box that a 30 ms step drove 10 cm through a 1 mm wall, pushed back at two corners, was
# turned by 4.2 rad and left across the wall (its true turn after the impact was 1.2 rad), and no later pass can see the
# side it came from. Below it the passes correct the second order of the turn (a tossed cube at 50 ms).
CORRECTION_TURN = 0.5
# A squeeze (a thin card between two pads on joints) makes the contacts nearly dependent, and the sweeps then gain
# little per sweep near the solution (a card squeezed while it slid: an eigenvalue of the pushing set's matrix 1e-7
# times its diagonal, 2e-11 m gained per sweep, 10^5 sweeps not enough). Every POSITION_DIRECT_EVERY sweeps the pushing
# set the sweeps have found is solved directly (``contact.position._direct_step``); in a scene with rows, an island of
# at most SMALL_ISLAND contacts every SMALL_DIRECT_EVERY sweeps: its matrix is cheap, and the joined responses make each
# sweep dear and slow to converge (a slider rattling in its notch, two to four corners on a wall joined through the
# crank: 44 -> 36 µs per step at 0.1 ms; the velocity solve's contact-space sweeps of such an island too,
# ``contact.dense.solve_dense``: a lifted card took 54 sweeps a step before its direct solve, 3 now). After
# POSITION_SLOW_SWEEPS sweeps a correction whose gaps are all within SLOW_GAP of complementarity is taken as converged
# (far below TOUCH, so no contact changes its state), and the direct steps from then on aim at SLOW_GAP: where a pad
# went 2.5 mm into the card's edge, the pushing set's equations could be met to 5e-13 m only, above POSITION_TOLERANCE.
SLOW_GAP = 1e-11  # m
POSITION_SLOW_SWEEPS = 1000  # count
POSITION_DIRECT_EVERY = 50  # count
SMALL_ISLAND = 8  # count (contacts)
SMALL_DIRECT_EVERY = 3  # count
# m: a pushing contact's linearised gap may end this far open: a tenth of TOUCH, so it still touches. Where a pad
# went 4.5-6 mm into the top edge of a card standing between the fixtures, the pushing set's dependent equations
# could be met together only to 1.4e-11-3.7e-11 m, while no gap needed to stay below its target by more than
# round-off.
PUSHING_GAP = 1e-10

# ---- Confinement (confinement.py) ------------------------------------------------------------------------------------

# m: a held point may end the stage this far beyond its held distance, and touches a face within it: the round-off
# of a translation, about 1e-16 of the coordinates (1e-16 m at 1 m), is far below it, and every margin worth
# declaring far above it.
HOLD_TOLERANCE = 1e-12
# count: sweeps of the hold over a body's points: a body that fits needs one per face it touches (three at a box's
# corner) plus one that finds nothing to do; one that cannot fit between two faces is pushed back and forth for
# ever, and a step that meets the cap fails (NOT_CONFINED) and is taken in parts, then reported.
MAX_HOLD_SWEEPS = 64
# m/s: the rule's projected Gauss-Seidel stops when no impulse changes a normal velocity by more (round-off of
# velocities of order 100 m/s is 1e-14 m/s); the centre's rule meets it in two sweeps, a box's corners on a face in
# a few dozen
RULE_TOLERANCE = 1e-12
# count: sweeps of the rule at most: a rule that meets the cap fails the step (NOT_CONFINED) as the hold's cap does
MAX_RULE_SWEEPS = 256
# count (points): points held per hull: every step evaluates each point against each face in every sweep of the hold
# and of the rule; 4096 is a sphere sampled at an eighteenth of its radius (4058 points).
MAX_HULL_POINTS = 4096
