(* Rank certificates checked by Coq's kernel.

   The statements are about mathcomp's own notions: an integer matrix A : 'M[int]_(m, n), built from a
   list of rows of binary integers (Z) by mathcomp-zify's int_of_Z, and its rank \rank over the
   rationals, \rank (map_mx intr A : 'M[rat]_(m, n)).  The checkers are boolean functions over Z, run
   by vm_compute; each comes with a soundness theorem, so a certificate is accepted only when Coq's
   kernel has evaluated its checker to true.

   lower bound  rank A >= k:  a k x k submatrix M = A[rows, cols] and a k x k integer matrix X with
                M X = 1 modulo some p >= 2.  Then det M det X = 1 in 'Z_p, so det M <> 0 in int, so M is
                invertible over rat and has rank k.  (p need not be prime.)
   upper bound  rank A <= n - c:  c vectors v_t with A v_t = 0 exactly, independent because the
                c x n matrix of them has rank c (a lower-bound witness as above).  Sylvester's
                inequality rank A + rank K <= n + rank (A K) = n does the rest.

   No axiom is used: `Print Assumptions` on every theorem below answers "Closed under the global
   context". *)
Set Warnings "-notation-overridden,-ambiguous-paths".
From Coq Require Import ZArith Lia.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq fintype bigop.
From mathcomp Require Import ssralg ssrint rat zmodp matrix mxalgebra ssrZ.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory.

(* ------------------------------------------------------------------------------------------------ *)
(* Data: a matrix is a list of rows of binary integers.                                             *)

Definition zmat := seq (seq Z).

(* The m x n integer matrix a list of rows denotes (missing entries read as 0). *)
Definition mx_of_Z m n (d : zmat) : 'M[int]_(m, n) :=
  \matrix_(i < m, j < n) int_of_Z (nth Z0 (nth [::] d i) j).

(* ------------------------------------------------------------------------------------------------ *)
(* The computations.                                                                                 *)

Fixpoint zdot (u v : seq Z) : Z :=
  match u, v with
  | x :: u', y :: v' => Z.add (Z.mul x y) (zdot u' v')
  | _, _ => Z0
  end.

Definition zsub (d : zmat) (rows cols : seq nat) : zmat :=
  [seq [seq nth Z0 (nth [::] d r) c | c <- cols] | r <- rows].

Definition zdelta (i j : nat) : Z := if i == j then (Zpos 1) else Z0.

(* M X = 1 modulo p, for the k x k matrix M (rows) and X given by its columns Xc. *)
Definition inv_mod_check (p : Z) (k : nat) (M Xc : zmat) : bool :=
  Z.ltb 1 p &&
  all (fun i => all (fun j => Z.eqb (Z.modulo (Z.sub (zdot (nth [::] M i) (nth [::] Xc j)) (zdelta i j)) p) 0)
                    (iota 0 k))
      (iota 0 k).

(* rank (mx_of_Z m n d) >= k, witnessed by the minor d[rows, cols] and its inverse modulo p. *)
Definition rank_lower_check m n (d : zmat) k (p : Z) (rows cols : seq nat) (Xc : zmat) : bool :=
  (size rows == k) && (size cols == k) && all (fun r => r < m) rows && all (fun c => c < n) cols &&
  inv_mod_check p k (zsub d rows cols) Xc.

(* A v = 0 exactly for every vector v of K (rows of d of length n). *)
Definition kernel_check n (d K : zmat) : bool :=
  all (fun r => size r == n) d &&
  all (fun r => all (fun v => Z.eqb (zdot r v) 0) K) d.

(* rank (mx_of_Z m n d) <= n - c: c kernel vectors K, independent because K[:, free] has an inverse
   modulo p (its columns Xc). *)
Definition rank_upper_check m n (d : zmat) c (K : zmat) (p : Z) (free : seq nat) (Xc : zmat) : bool :=
  (size d == m) && (size K == c) && kernel_check n d K &&
  rank_lower_check c n K c p (iota 0 c) free Xc.

(* ------------------------------------------------------------------------------------------------ *)
(* Soundness.                                                                                        *)

Local Open Scope ring_scope.

Lemma int_of_Z0 : int_of_Z Z0 = 0%R. Proof. by []. Qed.

Lemma int_of_ZD x y : int_of_Z (Z.add x y) = (int_of_Z x + int_of_Z y)%R.
Proof. exact: (rmorphD [rmorphism of int_of_Z] x y). Qed.

Lemma int_of_ZM x y : int_of_Z (Z.mul x y) = (int_of_Z x * int_of_Z y)%R.
Proof. exact: (rmorphM [rmorphism of int_of_Z] x y). Qed.

Lemma int_of_ZB x y : int_of_Z (Z.sub x y) = (int_of_Z x - int_of_Z y)%R.
Proof. exact: (rmorphB [rmorphism of int_of_Z] x y). Qed.

(* The list dot product is mathcomp's sum of products. *)
Lemma zdotE n u v : (size u <= n)%N ->
  int_of_Z (zdot u v) = (\sum_(l < n) int_of_Z (nth Z0 u l) * int_of_Z (nth Z0 v l))%R.
Proof.
elim: u v n => [|x u IH] v n /=.
  by move=> _; rewrite big1 // => l _; rewrite nth_nil mul0r.
case: n => [|n] //; rewrite ltnS => Hu.
case: v => [|y v].
  by rewrite big1 // => l _; rewrite nth_nil mulr0.
by rewrite big_ord_recl /= int_of_ZD int_of_ZM (IH v n Hu).
Qed.

(* The core: a submatrix with an inverse modulo p >= 2 is non-singular, so the rank is at least its
   size. *)
Lemma rank_ge_of_inv_mod m n (A : 'M[int]_(m, n)) k (rs : 'I_k -> 'I_m) (cs : 'I_k -> 'I_n)
    (X : 'M[int]_k) (P : nat) :
  (1 < P)%N ->
  (forall i j, exists q, (\sum_l A (rs i) (cs l) * X l j - (i == j)%:R = (P%:Z) * q)%R) ->
  (k <= \rank (map_mx (intr : int -> rat) A))%N.
Proof.
move=> P_gt1 HX.
pose M : 'M[int]_k := (\matrix_(i < k, j < k) A (rs i) (cs j))%R.
pose f := (intr : int -> 'Z_P).
have MX1 : map_mx f M *m map_mx f X = 1%:M.
  rewrite -map_mxM; apply/matrixP => i j; rewrite !mxE.
  have [q Hq] := HX i j.
  have -> : \sum_l M i l * X l j = P%:Z * q + (i == j)%:R.
    by rewrite -Hq subrK; apply: eq_bigr => l _; rewrite mxE.
  rewrite rmorphD rmorphM /= -[P%:~R]pmulrn (char_Zp P_gt1) mul0r add0r.
  by case: (i == j); rewrite /= ?mulr1n ?mulr0n ?rmorph1 ?rmorph0.
have detM : \det M != 0.
  apply/negP => /eqP dM; move: (congr1 determinant MX1).
  rewrite det_mulmx det_map_mx dM rmorph0 mul0r det1 => /eqP.
  by rewrite eq_sym oner_eq0.
have Mu : map_mx (intr : int -> rat) M \in unitmx.
  by rewrite unitmxE det_map_mx unitfE intr_eq0.
rewrite -(mxrank_unit Mu).
have -> : map_mx (intr : int -> rat) M = mxsub rs cs (map_mx intr A).
  by apply/matrixP => i j; rewrite !mxE.
have -> : mxsub rs cs (map_mx (intr : int -> rat) A) =
          rowsub rs 1%:M *m (map_mx intr A *m colsub cs 1%:M).
  by rewrite mulmx_colsub mulmx1 -mxsub_mul mul1mx.
exact: leq_trans (mxrankM_maxr _ _) (mxrankM_maxl _ _).
Qed.

Lemma rank_lower_sound m n (d : zmat) k p rows cols Xc :
  rank_lower_check m n d k p rows cols Xc ->
  (k <= \rank (map_mx (intr : int -> rat) (mx_of_Z m n d)))%N.
Proof.
rewrite /rank_lower_check /inv_mod_check.
case/andP=> /andP[/andP[/andP[/eqP Hr /eqP Hc] /allP Hrm] /allP Hcn] /andP[p_gt1 /allP Hall].
have rsP (i : 'I_k) : (nth 0%N rows i < m)%N by apply: Hrm; rewrite mem_nth // Hr.
have csP (i : 'I_k) : (nth 0%N cols i < n)%N by apply: Hcn; rewrite mem_nth // Hc.
pose X : 'M[int]_k := (\matrix_(l < k, j < k) int_of_Z (nth Z0 (nth [::] Xc j) l))%R.
have p_pos : Z.lt Z0 p by move/Z.ltb_lt: p_gt1; lia.
apply: (@rank_ge_of_inv_mod _ _ _ k (fun i => Ordinal (rsP i)) (fun i => Ordinal (csP i)) X
         (Z.to_nat p)).
  by apply/ltP; move/Z.ltb_lt: p_gt1; lia.
move=> i j.
have Hi : (i : nat) \in iota 0 k by rewrite mem_iota add0n ltn_ord.
have Hj : (j : nat) \in iota 0 k by rewrite mem_iota add0n ltn_ord.
move: (allP (Hall _ Hi) _ Hj) => /Z.eqb_eq Hmod.
set z := Z.sub (zdot _ _) _ in Hmod.
exists (int_of_Z (Z.div z p)).
have -> : (Z.to_nat p)%:Z = int_of_Z p.
  by move: p_pos; case: (p) => //= q _.
rewrite -int_of_ZM.
have -> : Z.mul p (Z.div z p) = z by rewrite {2}(Z.div_mod z p) ?Hmod ?Z.add_0_r //; lia.
rewrite /z int_of_ZB.
have -> : int_of_Z (zdelta i j) = ((i : nat) == j)%:R by rewrite /zdelta; case: (_ == _).
congr (_ + _).
rewrite (@zdotE k); last first.
  by rewrite /zsub (nth_map 0%N) ?size_map ?Hc ?Hr.
apply: eq_bigr => l _; rewrite !mxE /zsub (nth_map 0%N) ?Hr //.
by rewrite (nth_map 0%N) ?Hc.
Qed.

Lemma rank_upper_sound m n (d : zmat) c K p free Xc :
  rank_upper_check m n d c K p free Xc ->
  (\rank (map_mx (intr : int -> rat) (mx_of_Z m n d)) <= n - c)%N.
Proof.
case/andP=> /andP[/andP[_ _] /andP[/allP Hsize /allP Hker]] Hlow.
have Kc := rank_lower_sound Hlow.
pose Km : 'M[int]_(n, c) := (mx_of_Z c n K)^T.
have AK : mx_of_Z m n d *m Km = 0.
  apply/matrixP => i t; rewrite !mxE.
  have [Hi|Hi] := ltnP i (size d); last first.
    by rewrite big1 // => j _; rewrite /mx_of_Z !mxE (nth_default [::] Hi) nth_nil mul0r.
  have /allP/(_ (nth [::] K t)) := Hker _ (mem_nth [::] Hi).
  have [Ht|Ht] := ltnP t (size K); last first.
    by move=> _; rewrite big1 // => j _; rewrite /Km /mx_of_Z !mxE (nth_default [::] Ht) nth_nil mulr0.
  move=> /(_ (mem_nth [::] Ht)) /Z.eqb_eq H0.
  have Hs : (size (nth [::] d i) <= n)%N by rewrite (eqP (Hsize _ (mem_nth [::] Hi))).
  have := @zdotE n _ (nth [::] K t) Hs; rewrite H0 => E.
  transitivity (int_of_Z Z0); last by [].
  by rewrite E; apply: eq_bigr => j _; rewrite /Km /mx_of_Z !mxE.
have := mxrank_mul_min (map_mx (intr : int -> rat) (mx_of_Z m n d)) (map_mx intr Km).
rewrite -map_mxM AK map_mx0 mxrank0 leqn0 subn_eq0 => Hsum.
have HK : (c <= \rank (map_mx (intr : int -> rat) Km))%N.
  by rewrite /Km -map_trmx mxrank_tr.
move: Hsum HK; set a := \rank (map_mx _ (mx_of_Z m n d)); set b := \rank _ => Hsum HK.
by apply: leq_trans (leq_sub2l n HK); rewrite leq_subRL ?(leq_trans (leq_addl _ _) Hsum) // addnC.
Qed.

(* The exact rank: a lower-bound witness for r, and either r = min(m, n) or an upper-bound witness of
   n - r kernel vectors. *)
Theorem rank_eq_full m n (d : zmat) r p rows cols Xc :
  r = minn m n -> rank_lower_check m n d r p rows cols Xc ->
  \rank (map_mx (intr : int -> rat) (mx_of_Z m n d)) = r.
Proof.
move=> -> /rank_lower_sound Hlo; apply/eqP; rewrite eqn_leq Hlo andbT.
by rewrite leq_min rank_leq_row rank_leq_col.
Qed.

Theorem rank_eq_kernel m n (d : zmat) r p rows cols Xc K p' free Xc' :
  (r <= n)%N -> rank_lower_check m n d r p rows cols Xc -> rank_upper_check m n d (n - r)%N K p' free Xc' ->
  \rank (map_mx (intr : int -> rat) (mx_of_Z m n d)) = r.
Proof.
move=> rn /rank_lower_sound Hlo /rank_upper_sound Hup; apply/eqP; rewrite eqn_leq Hlo andbT.
by rewrite subKn in Hup.
Qed.
