//! The hosts' side of the network's events: a NIC receiving (data, ACK, NACK, PULL, pause
//! frames), the transports' timers and pacing, the pull pacer, and the NIC's scheduler
//! putting the next frame on its wire. What the NIC models and omits is in [`crate::host`].

use super::part::Part;
use super::Ev;
use crate::ctrl::{self, Ctrl};
use crate::host::CtrlPkt;
use crate::packet::{self, Header, ACK, DATA, ECN_ECT0, ECN_NOT_ECT, LAST, NACK, PULL};
use crate::records::PauseEvent;
use crate::transport::Ready;
use asic_model::mac::slot_time;
use pipelines::time::Time;

/// Host `name` (node `node`) paused or resumed `class` (a PFC class, a NIC queue for `kind`
/// "queue", a flow group for "group") at `now`: the record, with the node that logged it.
pub(crate) fn host_pause(
    now: Time,
    node: u32,
    name: &str,
    kind: &str,
    class: u16,
    paused: bool,
) -> (u32, PauseEvent) {
    let rec = PauseEvent {
        at_ps: now.ps(),
        node: name.to_string(),
        port: 0,
        kind: kind.into(),
        class,
        paused,
    };
    (node, rec)
}

impl Part {
    pub(crate) fn host_drop(&mut self, h: usize, reason: &'static str) {
        *self.host_drops.entry((h, reason)).or_default() += 1;
    }

    pub(crate) fn host_rx(&mut self, now: Time, h: usize, frame: u32) {
        let data = &self.pool.bufs[frame as usize];
        if ctrl::is_ctrl(data) {
            match ctrl::parse(data) {
                Some(c) => self.host_ctrl(now, h, c),
                None => self.host_drop(h, "bad_control_frame"),
            }
            return;
        }
        let Some(hd) = packet::parse(data) else {
            return self.host_drop(h, "unknown_frame");
        };
        let refusal = if hd.dst_ip != self.hosts[h].ip {
            Some("misdelivered")
        } else if hd.flow_id as usize >= self.flows.total() {
            Some("unknown_flow")
        } else if let Some(fl) = self.flows.get(hd.flow_id as usize) {
            // A host acts only on its own side of a flow: data of a flow it receives,
            // feedback for one it sends (and its data a switch returned to it), once the
            // flow has started. (Each side's state lives where its host runs.)
            let data = hd.flags & DATA != 0 && !(fl.spec.src == h && fl.spec.dst != h);
            let (side, started) = if data {
                (fl.spec.dst, fl.spec.start <= now)
            } else {
                (fl.spec.src, fl.sender.is_some())
            };
            if side != h {
                Some("misdelivered")
            } else if !started {
                Some("unknown_flow")
            } else {
                None
            }
        } else {
            // Neither of its hosts runs here, so neither is this one.
            Some("misdelivered")
        };
        if let Some(reason) = refusal {
            if hd.flags & DATA != 0 {
                if let Some(s) = self.sh.ip_to_host.get(&hd.src_ip) {
                    self.src[*s].refused += 1;
                }
            }
            return self.host_drop(h, reason);
        }
        let f = hd.flow_id as usize;
        if hd.flags & DATA != 0 && self.flows[f].spec.src == h && self.flows[f].spec.dst != h {
            // A trimmed header a switch returned to its sender (return-to-sender): it
            // arrived, at the host it came from.
            self.hosts[h].packets_received += 1;
            self.src[h].delivered += 1;
            if let Some(s) = self.flows[f].sender.as_mut() {
                s.on_returned(now, hd.seq);
            }
            self.after_sender(now, f);
            return;
        }
        if hd.flags & DATA != 0 {
            self.hosts[h].packets_received += 1;
            if let Some(s) = self.sh.ip_to_host.get(&hd.src_ip) {
                self.src[*s].delivered += 1;
            }
            let fl = &mut self.flows[f];
            let out = fl.receiver.on_data(&hd);
            if out.completed {
                fl.end = Some(now);
                self.completed += 1;
            }
            if let Some(r) = out.reply {
                let class = fl.spec.class as usize;
                self.hosts[h].ctrl[class].push_back(CtrlPkt {
                    flow: f as u32,
                    flags: r.flags,
                    seq: r.seq,
                    echo: r.echo,
                    ts_ps: r.ts_ps,
                });
                self.kick(now, h);
            }
            if out.pull {
                let host = &mut self.hosts[h];
                host.pulls.push_back(f as u32);
                if !host.pull_scheduled {
                    host.pull_scheduled = true;
                    let t = now.max(host.pull_next_at);
                    self.q.at_or_hold(t, Ev::PullTick { host: h as u32 });
                }
            }
        } else if hd.flags & (ACK | NACK | PULL) != 0 {
            if let Some(s) = self.flows[f].sender.as_mut() {
                s.on_feedback(now, &hd);
            }
            self.after_sender(now, f);
        }
    }

    pub(crate) fn host_ctrl(&mut self, now: Time, h: usize, c: Ctrl) {
        let host = &mut self.hosts[h];
        let mut changed = false;
        let mut group_resumed = false;
        let node = self.q.node;
        let rec = |pauses: &mut Vec<(u32, PauseEvent)>, kind: &str, class: u16, paused: bool| {
            pauses.push(host_pause(now, node, &host.name, kind, class, paused))
        };
        match c {
            Ctrl::Pfc(times) => {
                for (cl, t) in times.iter().enumerate() {
                    let Some(q) = *t else { continue };
                    if q == 0 {
                        host.class_paused_until[cl] = now;
                        if host.class_paused[cl] {
                            host.class_paused[cl] = false;
                            rec(&mut self.pauses, "pfc", cl as u16, false);
                            changed = true;
                        }
                    } else {
                        // One quantum: 512 bit times.
                        let until = now + Time::serialization(q as u64 * 64, host.gbps);
                        host.class_paused_until[cl] = until;
                        if !host.class_paused[cl] {
                            host.class_paused[cl] = true;
                            rec(&mut self.pauses, "pfc", cl as u16, true);
                        }
                        self.q.at(
                            until,
                            Ev::PauseEnd {
                                host: h as u32,
                                class: cl as u8,
                            },
                        );
                    }
                }
            }
            Ctrl::PauseQueue(q) | Ctrl::ResumeQueue(q) => {
                let pause = matches!(c, Ctrl::PauseQueue(_));
                if let Some(s) = host.queue_paused.get_mut(q as usize) {
                    if *s != pause {
                        *s = pause;
                        rec(&mut self.pauses, "queue", q, pause);
                        changed |= !pause;
                    }
                }
            }
            Ctrl::Bitmap { first, bitmap } => {
                for i in 0..bitmap.len() * 8 {
                    let q = first as usize + i;
                    let pause = bitmap[i / 8] & (1 << (i % 8)) != 0;
                    if let Some(s) = host.queue_paused.get_mut(q) {
                        if *s != pause {
                            *s = pause;
                            rec(&mut self.pauses, "queue", q as u16, pause);
                            changed |= !pause;
                        }
                    }
                }
            }
            Ctrl::PauseGroup(g) => {
                let n = host.group_paused.entry(g).or_insert(0);
                *n += 1;
                if *n == 1 {
                    rec(&mut self.pauses, "group", g, true);
                }
            }
            Ctrl::ResumeGroup(g) | Ctrl::MergeGroup { old: g, .. } => {
                if let Some(n) = host.group_paused.get_mut(&g) {
                    *n -= 1;
                    if *n == 0 {
                        host.group_paused.remove(&g);
                        rec(&mut self.pauses, "group", g, false);
                        group_resumed = true;
                    }
                }
            }
        }
        if group_resumed {
            // The flows set aside whose groups are all running again go back to their queues.
            for f in std::mem::take(&mut self.hosts[h].held) {
                let fl = &mut self.flows[f as usize];
                let host = &mut self.hosts[h];
                if fl.groups.iter().any(|g| host.group_paused.contains_key(g)) {
                    host.held.push(f);
                } else {
                    fl.held = false;
                    self.after_sender(now, f as usize);
                }
            }
        }
        if changed {
            self.kick(now, h);
        }
    }

    pub(crate) fn pull_tick(&mut self, now: Time, h: usize) {
        let host = &mut self.hosts[h];
        host.pull_scheduled = false;
        while let Some(f) = host.pulls.pop_front() {
            let fl = &mut self.flows[f as usize];
            if fl.receiver.complete() {
                continue;
            }
            fl.pulls_sent += 1;
            host.ctrl[fl.spec.class as usize].push_back(CtrlPkt {
                flow: f,
                flags: PULL,
                seq: fl.pulls_sent,
                echo: 0,
                ts_ps: now.ps(),
            });
            host.pull_next_at = now + fl.pull_gap;
            if !host.pulls.is_empty() {
                host.pull_scheduled = true;
                let t = host.pull_next_at;
                self.q.at(t, Ev::PullTick { host: h as u32 });
            }
            return self.kick(now, h);
        }
    }

    /// After anything touched flow `f`'s sender: arm its timer, wake it when paced, and put
    /// it in its NIC queue if it has a packet ready.
    pub(crate) fn after_sender(&mut self, now: Time, f: usize) {
        self.after_sender_from(now, f, false)
    }

    pub(crate) fn after_sender_from(&mut self, now: Time, f: usize, from_timer: bool) {
        let fl = &mut self.flows[f];
        let Some(s) = fl.sender.as_mut() else {
            return;
        };
        if let Some(t) = s.timer() {
            // A timer at or before now that the transport did not clear when it ran is not
            // re-armed (it would fire again at once, for ever).
            if fl.timer_at.is_none_or(|x| t < x) && (t > now || !from_timer) {
                fl.timer_at = Some(t);
                self.q
                    .at_or_hold(t.max(now), Ev::FlowTimer { flow: f as u32 });
            }
        }
        if fl.in_ring || fl.held {
            return;
        }
        match s.poll(now) {
            Ready::Now => {
                fl.in_ring = true;
                let h = fl.spec.src;
                self.hosts[h].queues[fl.queue as usize].push_back(f as u32);
                self.kick(now, h);
            }
            Ready::At(t) => {
                if fl.wake_at.is_none_or(|w| t < w) {
                    fl.wake_at = Some(t);
                    self.q.at(t, Ev::FlowWake { flow: f as u32 });
                }
            }
            Ready::Blocked => {}
        }
    }

    /// Let host `h`'s NIC send if its wire is free.
    pub(crate) fn kick(&mut self, now: Time, h: usize) {
        let host = &mut self.hosts[h];
        if host.tx_scheduled {
            return;
        }
        if now >= host.busy_until {
            self.try_send(now, h)
        } else {
            host.tx_scheduled = true;
            let t = host.busy_until;
            self.q.at(t, Ev::HostTx { host: h as u32 });
        }
    }

    /// The NIC's scheduler: serve one packet if the wire is free.
    pub(crate) fn try_send(&mut self, now: Time, h: usize) {
        if now < self.hosts[h].busy_until {
            return;
        }
        for class in (0..8).rev() {
            let host = &mut self.hosts[h];
            if host.class_paused_until[class] > now {
                continue;
            }
            if let Some(c) = host.ctrl[class].pop_front() {
                let fl = &self.flows[c.flow as usize];
                let hd = Header {
                    dst_mac: host.peer_mac,
                    src_mac: host.mac,
                    src_ip: host.ip,
                    dst_ip: self.sh.topo.host_ips[fl.spec.src],
                    ecn: ECN_NOT_ECT,
                    flags: c.flags,
                    class: class as u8,
                    queue: fl.queue,
                    seq: c.seq,
                    echo: c.echo,
                    flow_id: c.flow as u64,
                    ts_ps: c.ts_ps,
                    len: 0,
                    entropy: 0,
                };
                packet::build(&mut self.scratch, &hd, 0);
                return self.host_transmit(now, h);
            }
            let per_class = host.queues.len() / 8;
            let rr0 = host.rr[class];
            for k in 0..per_class {
                let qi = (rr0 + k) % per_class;
                let q = class + 8 * qi;
                if self.hosts[h].queue_paused[q] {
                    continue;
                }
                while let Some(f) = self.hosts[h].queues[q].pop_front() {
                    let fu = f as usize;
                    let fl = &mut self.flows[fu];
                    fl.in_ring = false;
                    let host = &mut self.hosts[h];
                    if fl.groups.iter().any(|g| host.group_paused.contains_key(g)) {
                        // A group it is in is paused: set aside until it resumes.
                        fl.held = true;
                        host.held.push(f);
                        continue;
                    }
                    let Some(s) = fl.sender.as_mut() else {
                        continue;
                    };
                    let seg = match s.poll(now) {
                        Ready::Now => s.next(now),
                        _ => None,
                    };
                    let Some(seg) = seg else {
                        self.after_sender(now, fu);
                        continue;
                    };
                    let host = &mut self.hosts[h];
                    let hd = Header {
                        dst_mac: host.peer_mac,
                        src_mac: host.mac,
                        src_ip: host.ip,
                        dst_ip: self.sh.topo.host_ips[fl.spec.dst],
                        ecn: if s.ecn_capable() {
                            ECN_ECT0
                        } else {
                            ECN_NOT_ECT
                        },
                        flags: DATA
                            | if seg.seq + 1 == fl.shape.packets {
                                LAST
                            } else {
                                0
                            },
                        class: class as u8,
                        queue: fl.queue,
                        seq: seg.seq,
                        echo: 0,
                        flow_id: f as u64,
                        ts_ps: now.ps(),
                        len: seg.len,
                        entropy: if s.sprays() {
                            packet::spray_entropy(f as u64, seg.seq)
                        } else {
                            0
                        },
                    };
                    packet::build(&mut self.scratch, &hd, seg.len as usize);
                    fl.packets_sent += 1;
                    fl.retx += seg.retx as u64;
                    host.packets_sent += 1;
                    host.rr[class] = (qi + 1) % per_class;
                    self.host_transmit(now, h);
                    // Back in its queue if it has more to send.
                    self.after_sender(now, fu);
                    return;
                }
            }
        }
    }

    /// Put the frame in `scratch` on host `h`'s wire now.
    pub(crate) fn host_transmit(&mut self, now: Time, h: usize) {
        let host = &mut self.hosts[h];
        let len = self.scratch.len();
        host.busy_until = now + slot_time(len, host.gbps);
        if let Some(i) = host.capture {
            self.captured.push((i, now), &self.scratch);
        }
        let at = now + Time(host.delay_ps);
        let i = self.pool.alloc();
        self.pool.bufs[i as usize].extend_from_slice(&self.scratch);
        self.host_frame_to_chip(h, at, i);
        let host = &mut self.hosts[h];
        // Serve the next packet when the wire is free.
        host.tx_scheduled = true;
        let t = host.busy_until;
        self.q.at(t, Ev::HostTx { host: h as u32 });
    }
}
