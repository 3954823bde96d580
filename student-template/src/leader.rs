//! The leader of one partition: **this file is your work.**
//!
//! Before you start, read the lesson ("Replication, the ISR and the High
//! Watermark") and the exercise contract (`reference/EXERCISE.md` in the
//! grader's repository): the contract says exactly what to print and when.
//!
//! `main.rs` reads the trace and calls one method of [`Leader`] per timed
//! command, in the order of the trace. Each method ends by calling
//! `after_command`, where the rules that apply after *every* command live.
//! Write output only through `self.out` (the lines are formatted for you);
//! print debugging output with `eprintln!`, never `println!`.
//!
//! As given, every method is empty: the program runs, prints nothing, and
//! every case of the grader fails. Fill in the places marked `TODO(student)`.

use crate::output::Output;
use crate::trace::Header;

pub struct Leader {
    /// The replica ids in the order of the REPLICAS line. `replicas[0]` is
    /// this leader; the others are its followers.
    pub replicas: Vec<u64>,
    /// `replica.lag.time.max.ms` (LAG_MAX), in ms.
    pub lag_max: u64,
    /// `min.insync.replicas` (MIN_ISR).
    pub min_isr: u64,
    /// Your output: `self.out.ack(..)`, `self.out.not_enough_replicas(..)`,
    /// `self.out.status(..)`.
    pub out: Output,
    // ---------------------------------------------------------------------
    // TODO(student): your state. Add the fields you need here and give them
    // their starting values in `Leader::new` (the contract's "State at the
    // start"). The lesson's leader keeps track of:
    //   - its own LEO, and the HW;
    //   - which replicas are in the ISR (at the start: all of them);
    //   - for every follower: its LEO, the last time it was caught up, the
    //     time of its latest fetch, and what the leader's LEO was at that fetch;
    //   - the acks=all produce requests that still wait for their answer.
    // ---------------------------------------------------------------------
}

impl Leader {
    pub fn new(header: &Header) -> Leader {
        Leader {
            replicas: header.replicas.clone(),
            lag_max: header.lag_max,
            min_isr: header.min_isr,
            out: Output::new(),
            // TODO(student): the starting values of your fields.
        }
    }

    /// `<t> FETCH <follower> <offset>`: the follower (never the leader) asks
    /// for the records from `offset` on; it therefore has every record below it.
    pub fn fetch(&mut self, t: u64, follower: u64, offset: u64) {
        // TODO(student): the caught-up rule (lesson, "The in-sync set").
        //   This fetch may prove that the follower was caught up: now, when it
        //   asks for everything the leader has; or at its previous fetch, when
        //   it asks for at least what the leader had back then (the case that
        //   keeps a follower in sync under constant load, and the one most
        //   often missed). Move its last caught-up time forward to match, never
        //   back. Then record this fetch: the follower's LEO becomes `offset`,
        //   and remember the time and the leader's current LEO.
        // TODO(student): rejoining (lesson, "Expanding"). A follower that is
        //   out of the ISR comes back in once its LEO has reached the HW.
        let _ = (follower, offset); // delete this line once you use them
        self.after_command(t);
    }

    /// `<t> STATUS`: the periodic ISR check runs, then the leader reports.
    pub fn status(&mut self, t: u64) {
        // TODO(student): the shrink check (lesson, "Shrinking"). A follower in
        //   the ISR whose last caught-up time is more than LAG_MAX ms before `t`
        //   leaves the ISR; one exactly LAG_MAX ms behind stays. The leader
        //   itself never leaves. This is the only place the check runs.
        self.after_command(t);
        // TODO(student): report, after the update above:
        //   self.out.status(t, &isr_ids, hw, leader_leo, writes_ok);
        //   with the ISR's ids in the order of the REPLICAS line, and
        //   writes_ok when the ISR has at least MIN_ISR members.
    }

    /// `<t> APPEND <n>`: the leader appends `n >= 1` records (acks=1: never
    /// refused, never answered, prints nothing).
    pub fn append(&mut self, t: u64, n: u64) {
        // TODO(student): the leader's log grows by `n` records.
        let _ = n; // delete this line once you use it
        self.after_command(t);
    }

    /// `<t> PRODUCE <n>`: an acks=all produce request of `n >= 1` records.
    pub fn produce(&mut self, t: u64, n: u64) {
        // TODO(student): acks=all and min.insync.replicas (lesson, "Durability
        //   knobs"). With fewer ISR members than MIN_ISR the request is refused
        //   at once with self.out.not_enough_replicas(t), and nothing is
        //   appended. Otherwise its records are appended: the first one gets
        //   the leader's current LEO as its offset (the request's `base`), and
        //   the request waits for its answer.
        let _ = n; // delete this line once you use it
        self.after_command(t);
    }

    /// What happens at the end of every command (each method above calls it).
    fn after_command(&mut self, t: u64) {
        // TODO(student): the high watermark (lesson, "The high watermark is
        //   ..."). It becomes the smallest LEO among the ISR members, the
        //   leader's own LEO included, unless that is lower than the HW already
        //   is: the HW never goes down.
        // TODO(student): answer the waiting acks=all requests whose records are
        //   now all below the HW, oldest first, each with self.out.ack(t, base).
        let _ = t; // delete this line once you use it
    }
}
