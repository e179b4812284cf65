"""`spacy-elmo.ElmoTok2Vec.v1`: the paper's recipe as a spaCy tok2vec."""

from typing import List

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Maxout, Model, chain, concatenate, with_array
from thinc.types import Floats2d


@registry.architectures("spacy-elmo.ElmoTok2Vec.v1")
def ElmoTok2Vec(
    embed: Model[List[Doc], List[Floats2d]],
    elmo: Model[List[Doc], List[Floats2d]],
    encode: Model[List[Floats2d], List[Floats2d]],
    width: int,
    maxout_pieces: int = 3,
) -> Model[List[Doc], List[Floats2d]]:
    """Concatenate a context-independent embedding (e.g. spacy.MultiHashEmbed.v2) with the
    task's ELMo vector (spacy-elmo.ElmoListener.v1), project the result to ``width`` with a
    Maxout layer and contextualise it with ``encode`` (spacy.MaxoutWindowEncoder.v2, or
    spacy.TorchBiLSTMEncoder.v1 for a BiLSTM), whose width must be ``width`` too.
    """
    project = with_array(Maxout(width, nP=maxout_pieces, normalize=True))
    model = chain(concatenate(embed, elmo), project, encode)
    model.set_dim("nO", width)
    model.set_ref("embed", embed)
    model.set_ref("elmo", elmo)
    model.set_ref("encode", encode)
    return model
