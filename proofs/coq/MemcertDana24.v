(* The exact parts of a dana24 certificate's read-out, checked by Coq's kernel.

   The read-out statement (docs/papers/dana24.md, section 3, step 6c) is about rational matrices whose
   entries are given as integers over one positive denominator each (qmx_of_Z):

     M   : 'M[rat]_d             the change of basis;                       det M <> 0
     W_O : 'M[rat]_(d, H dh)     the heads' output matrices side by side;   X = [M, W_O] = row_mx M W_O
     F   : 'M[rat]_(d + H dh, T) column t = the feature centre F~(t) of example t
     W_U : 'M[rat]_(N, d)        the unembedding;                           logits = W_U X F
   and for every example t and token j <> label t:  logits (label t) t - logits j t >= margin > 0.

   det_sound: M's integer numerator has an inverse modulo some p >= 2 (MemcertRank's rank_lower_check on
              the whole matrix), so it is invertible over the rationals, and so is M.
   readout_sound: the logits are recomputed with integers (zdot) by readout_check and compared with the
              margin after clearing the denominators.

   No axiom is used: `Print Assumptions` on the theorems below answers "Closed under the global
   context". *)
Set Warnings "-notation-overridden,-ambiguous-paths".
From Coq Require Import ZArith Lia.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq fintype bigop.
From mathcomp Require Import ssralg ssrnum ssrint rat zmodp matrix mxalgebra ssrZ.
From Memcert Require Import MemcertRank.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory.

Local Open Scope ring_scope.

(* The m x n rational matrix num / den. *)
Definition qmx_of_Z m n (num : zmat) (den : Z) : 'M[rat]_(m, n) :=
  (int_of_Z den)%:~R^-1 *: map_mx (intr : int -> rat) (mx_of_Z m n num).

(* A rational number num / den. *)
Definition rat_of_Z (num den : Z) : rat := (int_of_Z num)%:~R / (int_of_Z den)%:~R.

Lemma int_of_Z_gt0 z : Z.lt Z0 z -> 0 < int_of_Z z.
Proof. by case: z => //= p _; rewrite ltz_nat; apply/ltP; exact: Pos2Nat.is_pos. Qed.

Lemma int_of_Z_le x y : Z.le x y -> int_of_Z x <= int_of_Z y.
Proof.
move=> Hxy; have -> : y = Z.add x (Z.sub y x) by ring.
rewrite int_of_ZD ler_addl.
by case: (Z.sub y x) (Zle_minus_le_0 _ _ Hxy) => //= p _.
Qed.

(* det M <> 0 for M = num / den: den > 0 and num has an inverse modulo p (by columns Xc). *)
Definition det_check d (num : zmat) (den : Z) (p : Z) (Xc : zmat) : bool :=
  Z.ltb Z0 den && rank_lower_check d d num d p (iota 0 d) (iota 0 d) Xc.

Theorem det_sound d num den p Xc : det_check d num den p Xc -> \det (qmx_of_Z d d num den) != 0.
Proof.
case/andP=> /Z.ltb_lt den0 /rank_lower_sound Hr.
have Hu : map_mx (intr : int -> rat) (mx_of_Z d d num) \in unitmx.
  by rewrite -row_full_unit /row_full; apply/eqP/anti_leq; rewrite rank_leq_col Hr.
rewrite /qmx_of_Z detZ mulf_neq0 // ?expf_neq0 ?invr_eq0 ?intr_eq0 -?unitfE -?unitmxE //.
by rewrite lt0r_neq0 ?int_of_Z_gt0.
Qed.

(* X = [M, W_O] with integer numerators, row by row. *)
Definition zcat (d : nat) (A B : zmat) : zmat := [seq nth [::] A i ++ nth [::] B i | i <- iota 0 d].

Lemma row_mx_zcat d n h (A B : zmat) : all (fun r => size r == n) A -> size A = d ->
  row_mx (mx_of_Z d n A) (mx_of_Z d h B) = mx_of_Z d (n + h) (zcat d A B).
Proof.
move=> /allP HA SA; apply/matrixP => i k; rewrite !mxE /zcat (nth_map 0%N) ?size_iota // nth_iota // add0n.
have Hn : size (nth [::] A i) = n by apply/eqP/HA; rewrite mem_nth // SA.
case: splitP => [k' ->|k' ->]; rewrite !mxE nth_cat Hn ?ltn_ord //.
by rewrite ltnNge leq_addr /= addKn.
Qed.

(* For every example t (a row f of F and its label lab): lab < N and, with e = X f and L = W_U e over
   the integers, qn c <= qd (L_lab - L_j) for every j <> lab, where c = wden xden fden. *)
Definition logits_of N d (WU X : zmat) (f : seq Z) : seq Z :=
  let e := [seq zdot (nth [::] X i) f | i <- iota 0 d] in [seq zdot (nth [::] WU j) e | j <- iota 0 N].

Definition readout_check N d h T (Mn WOn : zmat) (xden : Z) (WU : zmat) (wden : Z) (F : zmat) (fden : Z)
    (next : seq nat) (qn qd : Z) : bool :=
  let c := Z.mul wden (Z.mul xden fden) in
  Z.ltb Z0 qn && Z.ltb Z0 qd && Z.ltb Z0 wden && Z.ltb Z0 xden && Z.ltb Z0 fden &&
  (size Mn == d) && all (fun r => size r == d) Mn && all (fun r => (size r <= d + h)%N) (zcat d Mn WOn) &&
  all (fun r => (size r <= d)%N) WU && (size F == T) && (size next == T) &&
  all2 (fun f lab => (lab < N)%N &&
          let L := logits_of N d WU (zcat d Mn WOn) f in
          all (fun j => (j == lab) || Z.leb (Z.mul qn c) (Z.mul qd (Z.sub (nth Z0 L lab) (nth Z0 L j))))
              (iota 0 N))
       F next.

Lemma all2_nth (A B : Type) (a0 : A) (b0 : B) (r : A -> B -> bool) s1 s2 i :
  all2 r s1 s2 -> (i < size s1)%N -> r (nth a0 s1 i) (nth b0 s2 i).
Proof. by elim: s1 s2 i => [|x s1 IH] [|y s2] [|i] //= /andP[H1 H2]; [move=> _ | apply: IH]. Qed.

(* logits = W_U [M, W_O] F. *)
Definition readout_logits N d h T WU wden Mn WOn xden F fden : 'M[rat]_(N, T) :=
  qmx_of_Z N d WU wden *m row_mx (qmx_of_Z d d Mn xden) (qmx_of_Z d h WOn xden) *m (qmx_of_Z T (d + h) F fden)^T.

Theorem readout_sound N d h T Mn WOn xden WU wden F fden next qn qd :
  readout_check N d h T Mn WOn xden WU wden F fden next qn qd ->
  0 < rat_of_Z qn qd /\
  (forall t : 'I_T, nth 0%N next t < N)%N /\
  (forall (t : 'I_T) (l j : 'I_N), (l : nat) = nth 0%N next t -> j != l ->
     readout_logits N d h T WU wden Mn WOn xden F fden l t -
     readout_logits N d h T WU wden Mn WOn xden F fden j t >= rat_of_Z qn qd).
Proof.
rewrite /readout_check => /andP[/andP[/andP[/andP[/andP[/andP[/andP[/andP[/andP[/andP[/andP[/Z.ltb_lt qn0 /Z.ltb_lt qd0] /Z.ltb_lt w0] /Z.ltb_lt x0] /Z.ltb_lt f0] /eqP SM] HM] HX] HW] /eqP SF] /eqP SN] Hall].
have qd0' := int_of_Z_gt0 qd0.
split; first by rewrite /rat_of_Z divr_gt0 ?ltr0z ?int_of_Z_gt0.
have Ht (t : 'I_T) := all2_nth [::] 0%N Hall (eq_ind_r (fun x => (t < x)%N) (ltn_ord t) SF).
split; first by move=> t; case/andP: (Ht t).
move=> t l j Elab.
case/andP: (Ht t) => lab_ok /allP Hj.
set lab := nth 0%N next t in lab_ok Hj Elab *.
set X := zcat d Mn WOn in HX Hj.
set f := nth [::] F t in Hj.
set L := logits_of N d WU X f in Hj.
(* the logits are c^-1 times the integers L *)
pose c := Z.mul wden (Z.mul xden fden).
have c0 : Z.lt Z0 c by rewrite /c; apply: Z.mul_pos_pos => //; apply: Z.mul_pos_pos.
have EL (i : 'I_N) : readout_logits N d h T WU wden Mn WOn xden F fden i t = (int_of_Z c)%:~R^-1 * (int_of_Z (nth Z0 L i))%:~R.
  rewrite /readout_logits /qmx_of_Z -scale_row_mx -map_row_mx row_mx_zcat //.
  have trZ m n a (A : 'M[rat]_(m, n)) : (a *: A)^T = a *: A^T by apply/matrixP => ? ?; rewrite !mxE.
  rewrite trZ map_trmx -!scalemxAl -!scalemxAr -!scalemxAl !scalerA -!map_mxM -mulmxA !mxE.
  congr (_ * _).
    rewrite /c !int_of_ZM !intrM !invfM; congr (_ * _); rewrite mulrC; congr (_ * _).
  apply: congr1.
  rewrite /L /logits_of (nth_map 0%N) ?size_iota // nth_iota // add0n.
  rewrite (@zdotE d); last first.
    case: (ltnP i (size WU)) => Hi; first by apply: (allP HW); rewrite mem_nth.
    by rewrite nth_default.
  apply: eq_bigr => r _; rewrite !mxE (nth_map 0%N) ?size_iota // nth_iota // add0n.
  congr (_ * _).
  rewrite (@zdotE (d + h)); last first.
    case: (ltnP r (size X)) => Hl; first by apply: (allP HX); rewrite mem_nth.
    by rewrite nth_default.
  by apply: eq_bigr => k _; rewrite !mxE.
move=> jlab.
have Hjl : (j : nat) != lab by rewrite -Elab.
have := Hj j; rewrite mem_iota add0n ltn_ord (negbTE Hjl) /= => /(_ isT) /Z.leb_le Hle.
rewrite !EL -mulrBr -rmorphB /=.
have Hc := int_of_Z_gt0 c0.
rewrite /rat_of_Z ler_pdivr_mulr ?ltr0z // -mulrA ler_pdivl_mull ?ltr0z // -!intrM ler_int Elab.
rewrite -int_of_ZB -!int_of_ZM; apply: int_of_Z_le.
move: Hle; rewrite /c; lia.
Qed.
