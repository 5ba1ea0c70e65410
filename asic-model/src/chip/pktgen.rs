//! The packet generator: [`super::PktGenApp`]s fire at exactly `start + k·period` (and at
//! each one-shot time), and the template enters the pipe's ingress at once (no MAC
//! serialization) through the pipe's packet-generator port, taking an issue slot like any
//! arrival. [`Chip::start`] schedules the applications; the bench and the network runtime
//! call it before they run the kernel.
//!
//! A source of packets inside the chip, not a port on the wire: the generator port (one per
//! pipe, after the recirculation ports) has no TM queues and receives nothing from outside.

use super::{Chip, ChipError, ChipEvent, PktGenApp};
use crate::kernel::Schedule;
use crate::profile::{ChipProfile, MAX_PORTS};
use crate::trace::Origin;
use pipelines::time::{Time, MAX_INPUT_NS};

/// The packet generator's applications and their periodic timers.
pub(super) struct PacketGenerator {
    apps: Vec<PktGenApp>,
    /// Per application: its periodic timer's firings so far (the next `PktGenTick` is due at
    /// `start + fired · period`).
    fired: Vec<u64>,
}

impl PacketGenerator {
    /// The first application that generates packets without end (a period, no count).
    pub(super) fn endless_app(&self) -> Option<usize> {
        self.apps
            .iter()
            .position(|a| a.period_ns.is_some() && a.count.is_none())
    }

    /// Check the applications against the chip (`port_ids`: how many ports it has, its
    /// generator ports included).
    pub(super) fn new(
        profile: &ChipProfile,
        apps: &[PktGenApp],
        port_ids: usize,
    ) -> Result<PacketGenerator, ChipError> {
        let bad = |s: String| Err(ChipError::Config(s));
        if apps.len() > profile.plumbing.pktgen_apps as usize {
            return bad(format!(
                "{} packet-generator applications; the chip has {}",
                apps.len(),
                profile.plumbing.pktgen_apps
            ));
        }
        for (i, a) in apps.iter().enumerate() {
            if a.pipe >= profile.pipes {
                return bad(format!("packet generator {i}: no pipe {}", a.pipe));
            }
            if a.period_ns == Some(0) {
                return bad(format!(
                    "packet generator {i}: the period must be greater than 0"
                ));
            }
            if a.template.is_empty() {
                return bad(format!("packet generator {i}: empty template"));
            }
            let times = [
                (a.start_ns, "start_ns"),
                (a.period_ns.unwrap_or(0), "period_ns"),
            ];
            for (ns, field) in times
                .into_iter()
                .chain(a.at_ns.iter().map(|&t| (t, "at_ns")))
            {
                Time::from_input_ns(ns, &format!("packet generator {i}: {field}"))
                    .map_err(ChipError::Config)?;
            }
        }
        if !apps.is_empty() && port_ids > MAX_PORTS as usize {
            return bad(format!(
                "the packet-generator ports would need ids up to {}; port ids are 9 bits",
                port_ids - 1
            ));
        }
        Ok(PacketGenerator {
            apps: apps.to_vec(),
            fired: vec![0; apps.len()],
        })
    }
}

impl Chip {
    /// The id of `pipe`'s packet-generator port ([`ChipProfile::pktgen_port`]).
    pub fn pktgen_port(&self, pipe: u16) -> Option<u16> {
        self.profile.pktgen_port(pipe)
    }

    /// Schedule the packet generator's first packets.
    pub(super) fn start_pktgen(&mut self, q: &mut impl Schedule<ChipEvent>) {
        for (a, app) in self.pktgen.apps.iter().enumerate() {
            let app_id = a as u16;
            if app.period_ns.is_some() && app.count != Some(0) {
                q.at(
                    Time::from_ns(app.start_ns),
                    ChipEvent::PktGenTick { app: app_id },
                );
            }
            for (i, &at) in app.at_ns.iter().enumerate() {
                q.at(
                    Time::from_ns(at),
                    ChipEvent::PktGenShot {
                        app: app_id,
                        i: i as u32,
                    },
                );
            }
        }
    }

    /// An application's periodic timer fires: schedule its next firing (unless that was the
    /// last) and make its packet.
    pub(super) fn pktgen_tick(&mut self, now: Time, app: u16, q: &mut impl Schedule<ChipEvent>) {
        let a = &self.pktgen.apps[app as usize];
        let (start, period) = (a.start_ns, a.period_ns.expect("a periodic app"));
        // One tick of an application is pending at a time: this is firing `n`.
        let fired = &mut self.pktgen.fired[app as usize];
        let n = *fired;
        *fired += 1;
        // An application without a count stops when its next packet would be later than
        // any time a scenario may name (a run is stopped long before).
        let next = (n + 1)
            .checked_mul(period)
            .and_then(|d| d.checked_add(start))
            .filter(|&ns| ns <= MAX_INPUT_NS);
        if let Some(ns) = next.filter(|_| a.count.is_none_or(|c| n + 1 < c)) {
            q.at(Time::from_ns(ns), ChipEvent::PktGenTick { app });
        }
        self.generate(now, app, q);
    }

    /// A packet-generator application makes its packet: it enters the pipe's ingress at
    /// once (no MAC), through the pipe's packet-generator port.
    pub(super) fn generate(&mut self, now: Time, app: u16, q: &mut impl Schedule<ChipEvent>) {
        let a = &self.pktgen.apps[app as usize];
        // The configuration check refused applications of pipes the chip lacks.
        let Some(port) = self.profile.pktgen_port(a.pipe) else {
            return;
        };
        let h = self.packets.alloc();
        let pkt = &mut self.packets.slots[h as usize];
        pkt.data.extend_from_slice(&a.template);
        pkt.ingress_port = port;
        pkt.rx_start = now;
        pkt.made_here = true;
        self.plumbing.counters.generated += 1;
        let c = &mut self.ports[port as usize].counters;
        c.rx_packets += 1;
        c.rx_bytes += a.template.len() as u64;
        if self.trace.is_some() {
            self.trace_made(h, None, Origin::Generated { app }, now);
        }
        self.issue_ingress(now, h, q);
    }
}
