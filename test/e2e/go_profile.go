// SPDX-License-Identifier: MIT

// go_profile criu [locked] DIR - a Go program with its CPU profiler on, for
// the criu suite (cases go-profile and go-profile-locked).  Built in the
// criu roots with Debian's golang-go: go build -o go_profile go_profile.go.
//
// locked: first, two goroutines each call runtime.LockOSThread, burn CPU
// until their thread has its profiling timer, and return still locked: Go
// then ends their threads (mexit) but keeps those timers, SIGEV_THREAD_ID
// at a thread that is gone, on the CPU clock of a thread that is gone.
// criu alone cannot restore such a timer ("Can't create posix timer").
//
// runtime/pprof.StartCPUProfile makes each OS thread that runs Go code
// create a timer on its own CPU clock (timer_create(CLOCK_THREAD_CPUTIME_ID,
// SIGEV_THREAD_ID + SIGPROF, the thread itself), 10 ms interval: runtime
// setThreadCPUProfiler, Go 1.18 and later).  Three goroutines burn CPU
// (GOMAXPROCS 4), each labelled phase=before.  Once every burner has run,
// writes DIR/criu.pid (its pid as the mounted /proc shows it: the host's
// when it is pid 1 of a pid namespace of its own) and DIR/criu.ready, and
// burns on while criu dumps it.
// Once DIR/restored appears (criu restored it), relabels the burners
// phase=after, reads the process's CPU time, lets them burn until the
// process has used 1.5 s more CPU (at most 15 s), stops them, reads the CPU
// time again and stops the profile.  The profile (gzipped protobuf,
// github.com/google/pprof proto/profile.proto) is parsed here: the samples
// of each phase are summed.  PASS when the profiler took samples before the
// dump, and after the restore samples at the profiler's 100 Hz of the CPU
// time used, within 25% (each thread's timer measures its own thread
// again; timers that all measure one thread give too few samples, or too
// many when that thread is a burner).
// PASS/FAIL lines, go-profile/..., to DIR/criu.result, then DIR/criu.done.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const burners = 3

var (
	phase   atomic.Int32 // 0 before, 1 after, 2 stop
	started atomic.Int32
	sink    atomic.Uint64
)

func burn(wg *sync.WaitGroup) {
	defer wg.Done()
	labels := []string{"before", "after"}
	seen := int32(-1)
	x := uint64(1)
	for {
		p := phase.Load()
		if p == 2 {
			break
		}
		if p != seen {
			pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("phase", labels[p])))
			if seen < 0 {
				started.Add(1)
			}
			seen = p
		}
		for i := 0; i < 200000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Add(x)
}

// cpuSeconds: user + system time of the whole process (getrusage), s.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// field: one protobuf field of a message: its number, wire type, and the
// varint value (wire type 0) or the bytes (wire type 2).
type field struct {
	num, wire int
	v         uint64
	b         []byte
}

func varint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("bad varint")
}

func fields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n, err := varint(b)
		if err != nil {
			return nil, err
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			if f.v, n, err = varint(b); err != nil {
				return nil, err
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, errors.New("short fixed64")
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return nil, errors.New("short fixed32")
			}
			b = b[4:]
		case 2:
			l, n, err := varint(b)
			if err != nil || uint64(len(b)-n) < l {
				return nil, errors.New("bad length")
			}
			f.b = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			return nil, fmt.Errorf("wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out, nil
}

// ints: the values of a repeated integer field, packed or not.
func ints(fs []field, num int) ([]uint64, error) {
	var out []uint64
	for _, f := range fs {
		if f.num != num {
			continue
		}
		if f.wire == 0 {
			out = append(out, f.v)
			continue
		}
		for b := f.b; len(b) > 0; {
			v, n, err := varint(b)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			b = b[n:]
		}
	}
	return out, nil
}

// samplesByPhase: the sample counts (the first value of each Sample, type
// samples/count) of a gzipped CPU profile, by the value of label "phase"
// ("" when none).
func samplesByPhase(gz []byte) (map[string]int64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	top, err := fields(raw)
	if err != nil {
		return nil, err
	}
	var strs []string
	for _, f := range top {
		if f.num == 6 && f.wire == 2 {
			strs = append(strs, string(f.b))
		}
	}
	str := func(i uint64) string {
		if i < uint64(len(strs)) {
			return strs[i]
		}
		return "?"
	}
	out := map[string]int64{}
	for _, f := range top {
		if f.num != 2 || f.wire != 2 {
			continue
		}
		sf, err := fields(f.b)
		if err != nil {
			return nil, err
		}
		vals, err := ints(sf, 2)
		if err != nil || len(vals) == 0 {
			return nil, errors.New("a sample without values")
		}
		ph := ""
		for _, l := range sf {
			if l.num != 3 || l.wire != 2 {
				continue
			}
			lf, err := fields(l.b)
			if err != nil {
				return nil, err
			}
			var k, s uint64
			for _, x := range lf {
				switch x.num {
				case 1:
					k = x.v
				case 2:
					s = x.v
				}
			}
			if str(k) == "phase" {
				ph = str(s)
			}
		}
		out[ph] += int64(vals[0])
	}
	return out, nil
}

func put(dir, name, text string) {
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err == nil {
		os.Rename(tmp, filepath.Join(dir, name))
	}
}

func main() {
	locked := len(os.Args) == 4 && os.Args[2] == "locked"
	if (len(os.Args) != 3 && !locked) || os.Args[1] != "criu" {
		fmt.Fprintln(os.Stderr, "usage: go_profile criu [locked] DIR")
		os.Exit(2)
	}
	dir := os.Args[len(os.Args)-1]
	runtime.GOMAXPROCS(4)
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		fmt.Fprintln(os.Stderr, "go_profile: StartCPUProfile:", err)
		os.Exit(2)
	}
	if locked {
		var lw sync.WaitGroup
		for i := 0; i < 2; i++ {
			lw.Add(1)
			go func() {
				defer lw.Done()
				runtime.LockOSThread()
				// long enough for the thread to make its timer and take samples
				x := uint64(1)
				for t := time.Now(); time.Since(t) < 200*time.Millisecond; {
					for j := 0; j < 1000; j++ {
						x = x*6364136223846793005 + 1
					}
				}
				sink.Add(x)
				// returns locked: the runtime ends this thread
			}()
		}
		lw.Wait()
		time.Sleep(100 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for i := 0; i < burners; i++ {
		wg.Add(1)
		go burn(&wg)
	}
	for started.Load() < burners {
		time.Sleep(time.Millisecond)
	}
	// every burner's thread has run Go code with the profiler on: its timer exists
	time.Sleep(300 * time.Millisecond)
	// the pid as the mounted /proc shows it: the host's, in a pid namespace of its own
	pid := fmt.Sprint(os.Getpid())
	if self, err := os.Readlink("/proc/self"); err == nil {
		pid = self
	}
	put(dir, "criu.pid", pid+"\n")
	put(dir, "criu.ready", "1\n")
	for {
		if _, err := os.Stat(filepath.Join(dir, "restored")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	phase.Store(1)
	c0 := cpuSeconds()
	for t := time.Now(); time.Since(t) < 15*time.Second && cpuSeconds()-c0 < 1.5; {
		time.Sleep(50 * time.Millisecond)
	}
	phase.Store(2)
	wg.Wait()
	cpu := cpuSeconds() - c0
	pprof.StopCPUProfile()

	var res bytes.Buffer
	bad := 0
	verdict := func(ok bool, what string, f string, a ...any) {
		v := "PASS"
		if !ok {
			v = "FAIL"
			bad++
		}
		fmt.Fprintf(&res, "%s go-profile/%s: %s\n", v, what, fmt.Sprintf(f, a...))
	}
	by, err := samplesByPhase(prof.Bytes())
	if err != nil {
		verdict(false, "profile", "cannot read the CPU profile (%d bytes): %v", prof.Len(), err)
	} else {
		verdict(by["before"] > 0, "samples-before-dump", "%d samples labelled phase=before", by["before"])
		lo, hi := cpu*100*0.75, cpu*100*1.25
		got := float64(by["after"])
		verdict(cpu >= 1.5 && got >= lo && got <= hi, "samples-after-restore",
			"%d samples labelled phase=after for %.3f s of CPU time (want %.0f to %.0f: 100 Hz within 25%%%s)",
			by["after"], cpu, lo, hi, map[bool]string{true: "", false: "; starved: under 1.5 s of CPU in 15 s"}[cpu >= 1.5])
	}
	put(dir, "criu.result", res.String())
	put(dir, "criu.done", "1\n")
	if bad > 0 {
		os.Exit(1)
	}
}
