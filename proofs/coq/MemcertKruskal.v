(* Kruskal-rank certificates checked by Coq's kernel.

   The vectors v_0 .. v_(T-1) of Z^d are the COLUMNS of the integer matrix
   A = kmx_of_Z d T V : 'M[int]_(d, T) (V lists the vectors).  Kruskal rank k means:

     every k columns are linearly independent over the rationals:
       forall s : 'I_k -> 'I_T strictly increasing, \rank (map_mx intr (colsub s A)) = k,
     and, unless k = T, some k+1 columns are dependent:
       exists s : 'I_k.+1 -> 'I_T strictly increasing, \rank (map_mx intr (colsub s A)) <= k.

   lower side  kruskal_lower_check: the increasing k-subsets of [0, T) are enumerated by ksub (in
               lexicographic order; ksub_complete shows every one is there), and each comes with a k x k
               minor of its k vectors and an inverse of it modulo p (MemcertRank's rank_lower_check),
               found by Coq itself when the exported Witness.v is compiled (kruskal_witnesses).
   upper side  kruskal_upper_check: k+1 increasing indices and integer coefficients c, not all zero
               (c_t0 <> 0 at the given position t0), with sum_t c_t v_(S_t) = 0 exactly.

   No axiom is used: `Print Assumptions` on the theorems below answers "Closed under the global
   context". *)
Set Warnings "-notation-overridden,-ambiguous-paths".
From Coq Require Import ZArith Lia PrimInt63 Uint63.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq path fintype bigop.
From mathcomp Require Import ssralg ssrint rat zmodp matrix mxalgebra ssrZ.
From Memcert Require Import MemcertRank.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory.

(* The d x T integer matrix whose column j is the vector nth V j (missing entries read as 0). *)
Definition kmx_of_Z d T (V : zmat) : 'M[int]_(d, T) :=
  \matrix_(i < d, j < T) int_of_Z (nth Z0 (nth [::] V j) i).

(* The increasing k-subsets of [a, a + n), in lexicographic order. *)
Fixpoint ksub (a n k : nat) {struct n} : seq (seq nat) :=
  match n, k with
  | _, 0 => [:: [::]]
  | 0, _.+1 => [::]
  | n'.+1, k'.+1 => [seq a :: s | s <- ksub a.+1 n' k'] ++ ksub a.+1 n' k
  end.

Lemma ksub_complete n a k s :
  sorted ltn s -> all (fun x => (a <= x) && (x < a + n)) s -> size s = k -> s \in ksub a n k.
Proof.
elim: n a k s => [|n IH] a k s.
  case: s => [|x s] /=; first by move=> _ _ <-; case: k.
  by move=> _ /andP[/andP[ax]]; rewrite addn0 ltnNge ax.
case: k => [|k]; first by case: s.
case: s => [|x s] //= Hs /andP[/andP[ax xn] Hall] [Hk].
have Hmin : all (ltn x) s := order_path_min ltn_trans Hs.
rewrite mem_cat addnS in xn Hall *; case: (ltngtP a x) ax => // [ax|Ea] _; last subst a.
  apply/orP; right; apply: IH => /=; rewrite ?Hk // addSn ax xn /=.
  apply/allP => y ys; move/allP: Hall => /(_ y ys) /andP[_ ->].
  by move/allP: Hmin => /(_ y ys) /(ltn_trans ax) ->.
apply/orP; left; apply/mapP; exists s => //; apply: IH => //.
  exact: path_sorted Hs.
apply/allP => y ys; move/allP: Hall => /(_ y ys) /andP[_ yn].
have Hy : (x < y)%N := allP Hmin y ys.
by rewrite Hy /= addSn.
Qed.

(* The vectors of V at the indices S, as the rows of a matrix. *)
Definition pick (A : Type) (V : seq (seq A)) (S : seq nat) : seq (seq A) := [seq nth [::] V i | i <- S].

(* Every increasing k-subset S of [0, T) comes (in the order of ksub) with a witness (cols, X): the
   minor (pick V S)[0..k, cols] times X is 1 modulo p. *)
Definition kruskal_lower_check T d (V : zmat) k (p : Z) (W : seq (seq nat * zmat)) : bool :=
  all2 (fun S w => rank_lower_check k d (pick V S) k p (iota 0 k) w.1 w.2) (ksub 0 T k) W.

(* Finding the witnesses (not part of any theorem): an exported Witness.v defines its witness list as
   `Eval vm_compute in kruskal_witnesses ...`, so the list is computed by Coq when the file is compiled
   and then stored as plain data; kruskal_lower_check verifies it.  For one k-subset, Gauss-Jordan
   elimination modulo p on the k vectors (rows of length d) augmented by the identity gives k pivot
   coordinates cols and the matrix E with E * rows[:, cols] = 1 modulo p; E by columns is the inverse.
   Nothing about this computation is proved (a wrong result only makes the check false), so it uses
   Coq's primitive 63-bit integers for speed (residues below p < 2^31, products below 2^62); no theorem
   refers to it, so they do not appear in `Print Assumptions`. *)
Definition imulm (p a b : PrimInt63.int) : PrimInt63.int := PrimInt63.mod (PrimInt63.mul a b) p.

Fixpoint ipow_mod (p b : PrimInt63.int) (e : positive) : PrimInt63.int :=
  match e with
  | xH => b
  | xO e' => let h := ipow_mod p b e' in imulm p h h
  | xI e' => let h := ipow_mod p b e' in imulm p (imulm p h h) b
  end.

(* x^-1 modulo the prime p (Fermat). *)
Definition iinv_mod (pz : Z) (p x : PrimInt63.int) : PrimInt63.int :=
  match Z.sub pz (Zpos 2) with Zpos e => ipow_mod p x e | _ => x end.

(* v - c r, entrywise modulo p *)
Definition iaxpy (p c : PrimInt63.int) (r v : seq PrimInt63.int) : seq PrimInt63.int :=
  [seq PrimInt63.mod (PrimInt63.sub (PrimInt63.add xy.2 p) (imulm p c xy.1)) p | xy <- zip r v].

Fixpoint first_nonzero (v : seq PrimInt63.int) (i d : nat) : option nat :=
  match v, d with
  | x :: v', d'.+1 => if PrimInt63.eqb x 0%uint63 then first_nonzero v' i.+1 d' else Some i
  | _, _ => None
  end.

(* One more vector into the reduced basis B (pairs of pivot coordinate and row, each row 1 at its own
   pivot and 0 at the others). *)
Definition gj_add (pz : Z) (p : PrimInt63.int) (d : nat) (B : seq (nat * seq PrimInt63.int)) (v : seq PrimInt63.int) : seq (nat * seq PrimInt63.int) :=
  let v := foldl (fun v b => iaxpy p (nth 0%uint63 v b.1) b.2 v) v B in
  match first_nonzero v 0 d with
  | None => B
  | Some c =>
      let s := iinv_mod pz p (nth 0%uint63 v c) in
      let v := [seq imulm p s x | x <- v] in
      rcons [seq (b.1, iaxpy p (nth 0%uint63 b.2 c) v b.2) | b <- B] (c, v)
  end.

Definition iunit (k i : nat) : seq PrimInt63.int := [seq if i == j then 1%uint63 else 0%uint63 | j <- iota 0 k].

(* rows: the k vectors as residues modulo p. *)
Definition gj_witness (pz : Z) (d k : nat) (rows : seq (seq PrimInt63.int)) : seq nat * zmat :=
  let p := Uint63.of_Z pz in
  let B := foldl (gj_add pz p d) [::] [seq nth [::] rows i ++ iunit k i | i <- iota 0 k] in
  let E := [seq drop d b.2 | b <- B] in
  ([seq b.1 | b <- B], [seq [seq Uint63.to_Z (nth 0%uint63 r j) | r <- E] | j <- iota 0 k]).

Definition residues (p : Z) (V : zmat) : seq (seq PrimInt63.int) :=
  [seq [seq Uint63.of_Z (Z.modulo x p) | x <- v] | v <- V].

Definition kruskal_witnesses T d (V : zmat) k (p : Z) : seq (seq nat * zmat) :=
  let R := residues p V in [seq gj_witness p d k (pick R S) | S <- ksub 0 T k].

(* The columns S (k+1 increasing indices below T) of A are dependent: sum_t c_t v_(S_t) = 0 with
   c_t0 <> 0. *)
Definition kruskal_upper_check T d (V : zmat) k (S : seq nat) (c : seq Z) (t0 : nat) : bool :=
  (size S == k.+1) && sorted ltn S && all (fun x => x < T) S && (size c == k.+1) && (t0 < k.+1) &&
  negb (Z.eqb (nth Z0 c t0) Z0) &&
  all (fun i => Z.eqb (zdot [seq nth Z0 (nth [::] V j) i | j <- S] c) Z0) (iota 0 d).

Local Open Scope ring_scope.

Definition incr k T (s : 'I_k -> 'I_T) := forall i j : 'I_k, (i < j)%N -> (s i < s j)%N.

Lemma incr_sorted k T (s : 'I_k -> 'I_T) :
  incr s -> sorted ltn [seq (s i : nat) | i <- enum 'I_k].
Proof.
move=> Hs; rewrite sorted_map; apply: (@sub_sorted _ (fun i j : 'I_k => (i < j)%N)).
  by move=> i j /Hs.
have : sorted ltn [seq val i | i <- enum 'I_k] by rewrite val_enum_ord iota_ltn_sorted.
by rewrite sorted_map.
Qed.

Lemma colsub_pick d T (V : zmat) k (s : 'I_k -> 'I_T) :
  colsub s (kmx_of_Z d T V) = (mx_of_Z k d (pick V [seq (s i : nat) | i <- enum 'I_k]))^T.
Proof.
apply/matrixP => i j; rewrite !mxE /pick (nth_map 0%N); last by rewrite size_map size_enum_ord.
by rewrite (nth_map j) ?size_enum_ord // nth_ord_enum.
Qed.

Theorem kruskal_lower_sound T d (V : zmat) k p W :
  kruskal_lower_check T d V k p W ->
  forall s : 'I_k -> 'I_T, incr s -> \rank (map_mx (intr : int -> rat) (colsub s (kmx_of_Z d T V))) = k.
Proof.
move=> Hall s Hs.
set S := [seq (s i : nat) | i <- enum 'I_k].
have HS : S \in ksub 0 T k.
  apply: ksub_complete; first exact: incr_sorted.
    by apply/allP => x /mapP[i _ ->]; rewrite add0n ltn_ord.
  by rewrite size_map size_enum_ord.
have [w Hw] : exists w, rank_lower_check k d (pick V S) k p (iota 0 k) w.1 w.2.
  move: Hall HS; rewrite /kruskal_lower_check; elim: (ksub 0 T k) W => [|S' L IH] [|w W] //= /andP[H1 H2].
  rewrite in_cons => /orP[/eqP ->|]; first by exists w.
  exact: IH H2.
apply/eqP; rewrite eqn_leq rank_leq_col /=.
by rewrite colsub_pick -map_trmx mxrank_tr (rank_lower_sound Hw).
Qed.

Theorem kruskal_upper_sound T d (V : zmat) k S c t0 :
  kruskal_upper_check T d V k S c t0 ->
  exists s : 'I_k.+1 -> 'I_T, incr s /\ (\rank (map_mx (intr : int -> rat) (colsub s (kmx_of_Z d T V))) <= k)%N.
Proof.
case/andP=> /andP[/andP[/andP[/andP[/andP[/eqP HSz Hsort] /allP HT] /eqP Hcz] Ht0] Hc0] /allP Hker.
have sP (i : 'I_k.+1) : (nth 0%N S i < T)%N by apply: HT; rewrite mem_nth // HSz.
pose s (i : 'I_k.+1) : 'I_T := Ordinal (sP i).
exists s; split.
  move=> i j ij /=; apply: (sorted_ltn_nth ltn_trans 0%N Hsort) => //; by rewrite inE HSz.
(* the d x (k+1) submatrix as a list of rows, and c as its one kernel vector *)
pose D : zmat := [seq [seq nth Z0 (nth [::] V j) i | j <- S] | i <- iota 0 d].
have ED : colsub s (kmx_of_Z d T V) = mx_of_Z d k.+1 D.
  apply/matrixP => i j; rewrite !mxE /D (nth_map 0%N) ?size_iota // nth_iota // add0n.
  by rewrite (nth_map 0%N) ?HSz.
pose a := nth Z0 c t0.
pose P := Z.add (Z.abs a) (Zpos 1).
pose x := if Z.ltb Z0 a then Z.abs a else Zpos 1.
have Hup : rank_upper_check d k.+1 D 1%N [:: c] P [:: t0] [:: [:: x]].
  rewrite /rank_upper_check /kernel_check /rank_lower_check /inv_mod_check /=.
  rewrite /D size_map size_iota eqxx /= Ht0 /=.
  apply/andP; split.
    apply/andP; split; first by apply/allP => r /mapP[i _ ->]; rewrite size_map HSz.
    apply/allP => r /mapP[i Hi ->] /=; rewrite andbT; exact: Hker.
  move/negbTE/Z.eqb_neq: Hc0 => Ha; rewrite -/a /zsub /= /zdelta /= -/a.
  apply/andP; split; first by apply/Z.ltb_lt; lia.
  rewrite !andbT; apply/Z.eqb_eq; rewrite /x /P.
  case: (Z.ltb_spec Z0 a) => Ha0.
    rewrite Z.abs_eq; last lia.
    rewrite Z.add_0_r (_ : Z.sub (Z.mul a a) (Zpos 1) = Z.mul (Z.sub a (Zpos 1)) (Z.add a (Zpos 1))); last ring.
    by rewrite Z_mod_mult.
  rewrite Z.abs_neq; last lia.
  rewrite Z.add_0_r Z.mul_1_r (_ : Z.sub a (Zpos 1) = Z.mul (Zneg 1) (Z.add (Z.opp a) (Zpos 1))); last ring.
  by rewrite Z_mod_mult.
have := rank_upper_sound Hup.
by rewrite ED subn1.
Qed.
